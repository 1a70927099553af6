"""The `crossover` command line: offline screening evaluation, cost reports, DLQ operations."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence, TextIO


def screen_jsonl(source: TextIO, sink: TextIO, threshold: float) -> int:
    """One {"text": ...} per input line -> one {"blocked", "reasons", "score"} per output line, in order."""
    from .screening import Policy, screen

    policy = Policy(block_threshold=threshold, max_chars=10**9)
    bad_lines = 0
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            text = json.loads(line)["text"]
            if not isinstance(text, str):
                raise TypeError("text must be a string")
        except (ValueError, KeyError, TypeError) as exc:
            # Keep output aligned with input: an error line, not a silent skip.
            sink.write(json.dumps({"error": f"line {number}: {exc.__class__.__name__}: {exc}"}) + "\n")
            bad_lines += 1
            continue
        verdict = screen(text, policy)
        sink.write(json.dumps({"blocked": not verdict.allowed, "reasons": list(verdict.reasons), "score": round(verdict.score, 4)}) + "\n")
    return 1 if bad_lines else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="crossover", description="Crossover operations.")
    commands = parser.add_subparsers(dest="command", required=True)
    screen_cmd = commands.add_parser("screen", help="screen prompts offline (local layers)")
    screen_cmd.add_argument("--jsonl", action="store_true", required=True, help="read JSON lines on stdin, write verdicts on stdout")
    screen_cmd.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args(argv)
    if args.command == "screen":
        return screen_jsonl(sys.stdin, sys.stdout, args.threshold)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
