# The reviewer is a plain script agent: one ask_llm call over everything the
# team has stored, then the verdict goes to memory and to the team by message.
import json

import hugind
import hugind.team as team


def _refuse(name):
    raise ValueError(f"not JSON: {name}")  # NaN, Infinity: JSON.parse refuses them too


def _text(value):
    """The JS twin's String(x || "unknown") for what a model returns: strings as they are."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def main(input):
    task = input["team"]["task"]
    inbox = team.receive()
    spec = team.memory_get("architect/spec")
    code = team.memory_get("developer/code")
    if spec is None or code is None:
        raise RuntimeError("nothing to review: architect/spec or developer/code is missing")
    prompt = "\n".join(
        [
            "You are the code reviewer of a small team.",
            'Reply with JSON only: {"verdict": "approve" or "changes", "comments": "<short review>"}.',
            "",
            f"Task: {task['description']}",
            "",
            team.memory_summary(),
            "Messages to you:\n" + "\n".join(f"- from {m['from']}: {m['content']}" for m in inbox) if inbox else "",
        ]
    )
    reply = hugind.ask_llm(prompt)
    try:
        review = json.loads(reply, parse_constant=_refuse)
    except ValueError:
        review = {"verdict": "unknown", "comments": reply}
    if not isinstance(review, dict):
        review = {}
    verdict = _text(review.get("verdict") or "unknown")
    comments = _text(review.get("comments") or "")
    team.memory_set("review", {"verdict": verdict, "comments": comments})
    team.send("developer", f"Review {verdict}: {comments}")
    team.broadcast(f"Review finished: {verdict}")
    return {"verdict": verdict, "messages_read": [m["from"] for m in inbox]}
