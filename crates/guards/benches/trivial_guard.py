"""The trivial guard of the round-trip bench: passes every call, through the SDK."""

from tauguard_guard import Decision, Guard

guard = Guard("trivial", "0")


@guard.on_mutating_call
def allow(call, session):
    return Decision.allow()


if __name__ == "__main__":
    guard.run()
