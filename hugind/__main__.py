from hugind.cli import main

main()
