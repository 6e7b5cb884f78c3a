import sys


def main():
    print("golden", sys.argv[1:])


if __name__ == "__main__":
    main()
