"""What the Python end-to-end tests share: a line per check ("ok   - ..." / "FAIL - ..." with
its details indented) and the tally. Import it from a test beside it:

    from e2e_tap import ok, bad, tally
    ...
    print(f"{tally.passed} passed, {tally.failed} failed")
"""


class _Tally:
    passed = 0
    failed = 0


tally = _Tally()


def ok(what):
    tally.passed += 1
    print("ok   - " + what, flush=True)


def bad(what, *details):
    tally.failed += 1
    print("FAIL - " + what, flush=True)
    for d in details:
        print("       " + str(d)[:800], flush=True)
