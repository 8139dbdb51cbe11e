from hugind.entry import main

main()
