"""A rule guard: no cancellation of a basic-economy reservation without travel insurance,
unless it was booked within the last 24 hours (checked with a lookup of the reservation).

Other domains have no rule here, so every call passes. Run by tauguard:
    external = { command = ["python3", "sdk/python/examples/rule_guard.py"] }
or served over HTTP (`python3 rule_guard.py --http 127.0.0.1:9000`):
    external = { url = "http://127.0.0.1:9000" }
"""

import re
from datetime import datetime, timedelta

from tauguard_guard import Decision, Guard, LookupError, Requirement

guard = Guard("basic-economy-cancellation", "0.1.0")


def now_of(policy):
    """The domain's clock, as its policy states it ("The current time is ...")."""
    m = re.search(r"current time is (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})", policy)
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S") if m else None


@guard.on_mutating_call
def check(call, session):
    if session.domain != "airline" or call.name != "cancel_reservation":
        return Decision.allow()
    rid = call.arguments.get("reservation_id")
    try:
        r = session.lookup("get_reservation_details", {"reservation_id": rid})
    except LookupError as e:
        # No such reservation: the tool itself will refuse the call.
        return Decision.allow([Requirement("reservation_exists", False, str(e))])
    basic = r.get("cabin") == "basic_economy"
    insured = r.get("insurance") == "yes"
    now = now_of(session.policy)
    recent = False
    if now is not None and r.get("created_at"):
        recent = now - datetime.fromisoformat(r["created_at"]) <= timedelta(hours=24)
    reqs = [
        Requirement("not_basic_economy_or_insured", (not basic) or insured,
                    f"cabin {r.get('cabin')}, insurance {r.get('insurance')}"),
        Requirement("booked_within_24_hours", recent, f"created at {r.get('created_at')}"),
    ]
    if basic and not insured and not recent:
        return Decision.block(
            "This basic economy reservation has no travel insurance and was booked more than "
            "24 hours ago, so it cannot be cancelled. Explain this to the user.",
            reqs,
        )
    return Decision.allow(reqs)


if __name__ == "__main__":
    guard.main()  # stdio; `--http HOST:PORT` to serve over HTTP
