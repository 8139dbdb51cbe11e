# A script agent in Python. hugind runs this file, then calls main(input) with
# {"args": [...], "meta": {...}} and prints what it returns as JSON.
# Everything outside the sandbox (here hugind.fs.read_text) is a request the
# policy in agent.yaml allows or denies.
import hugind


def main(input):
    file = input["args"][0] if input["args"] else "data/hello.txt"
    text = hugind.fs.read_text(file)  # raises hugind.PermissionDenied outside data/
    hugind.eprint(f"{file}: {len(text)} characters")  # progress goes to stderr, never into the result
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return {"file": file, "lines": lines, "words": len(text.split())}
