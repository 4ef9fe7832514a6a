"""Checks that an environment holds exactly the versions in requirements/lock.txt.

    python requirements/check_lock.py requirements/lock.txt           # exit 1 on any difference
    python requirements/check_lock.py requirements/lock.txt --report  # list them, exit 0

Run with the environment's own python (the Makefile runs it after every install from the
lock). pip applies a constraints file only to what it installs: a dependency added to
pyproject.toml without `make lock` would come in at whatever version is newest, and a package
the lock no longer lists stays in an existing .venv. Packages the lock pins but the
environment lacks are fine (`make test` does not install the browser extra) and are counted.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import distributions

#: The project itself is installed editable from the checkout, not from the lock.
PROJECT = "mas-eval"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: str) -> dict[str, str]:
    pins = {}
    with open(path) as lines:
        for line in lines:
            requirement = line.split("#", 1)[0].split(";", 1)[0].strip()
            if requirement:
                name, version = requirement.split("==")
                pins[canonical(name)] = version.strip()
    return pins


def main(argv: list[str]) -> int:
    lock_path, report = argv[0], "--report" in argv[1:]
    pins = read_lock(lock_path)
    installed = {canonical(d.metadata["Name"]): d.version for d in distributions()}
    installed.pop(PROJECT, None)
    differ = [
        f"  {name}: installed {version}, lock {pins.get(name, 'has no pin')}"
        for name, version in sorted(installed.items())
        if pins.get(name) != version
    ]
    missing = len(set(pins) - set(installed))
    print(
        f"{len(installed)} packages installed (besides mas_eval), {len(installed) - len(differ)} as {lock_path} "
        f"pins them, {len(differ)} not; {missing} of its {len(pins)} pins not installed here"
    )
    if differ:
        print("\n".join(differ))
    if differ and not report:
        print("`make clean test` installs the lock anew; `make lock` first if pyproject.toml gained a dependency")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
