#!/usr/bin/env python3
"""listing.py - write a case's listing.txt: the order the file system listed each directory
of the run the real agent just ran on (`os.listdir` is `readdir`'s order, unsorted).

usage: listing.py RUN CASE RUN_SUB=CASE_SUB...
  e.g. listing.py "$out/run" "$case" proj=proj home=home .=above

For every directory below RUN/RUN_SUB that the case has at CASE/CASE_SUB, the names the case
has there (what the agent or the capture added is left out), in the order RUN listed them;
one line per directory with two entries or more: `CASE_SUB/rel<TAB>name<TAB>name...`. The test
runners lay each case out in this order (tests/agents.rs, tests/conformance.rs), so an agent
that sends a folder as listed is compared with what it sent on this disk. No line at all (and
no file) when no directory has two entries.
"""
import os
import sys


def walk(run_dir, case_dir, shown, out):
    try:
        listed = os.listdir(run_dir)
    except OSError:
        return
    ours = set(os.listdir(case_dir)) if os.path.isdir(case_dir) else set()
    names = [n for n in listed if n in ours and n != ".git"]
    if len(names) > 1:
        out.append("\t".join([shown] + names))
    for name in names:
        sub_run, sub_case = os.path.join(run_dir, name), os.path.join(case_dir, name)
        if os.path.isdir(sub_run) and not os.path.islink(sub_run) and os.path.isdir(sub_case):
            walk(sub_run, sub_case, f"{shown}/{name}", out)


def main():
    run, case, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = []
    for pair in pairs:
        run_sub, case_sub = pair.split("=", 1)
        walk(os.path.normpath(os.path.join(run, run_sub)), os.path.join(case, case_sub), case_sub, out)
    dest = os.path.join(case, "listing.txt")
    if out:
        with open(dest, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
    elif os.path.exists(dest):
        os.remove(dest)


if __name__ == "__main__":
    main()
