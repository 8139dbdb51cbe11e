def add(a, b):
    return a + b


def main():
    # TODO: read numbers from the command line
    print(add(2, 3))


if __name__ == "__main__":
    main()
