def greet(greeting, who):
    return f"{greeting}, {who}!"
