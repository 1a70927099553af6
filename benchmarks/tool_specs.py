"""Declared client tool specs: what screening each one costs, and what screening them joined would lose.

Each declared tool's spec (description + input schema, as `agent.tools.tool_spec_text` renders it) is screened on
its own. This prints (1) `screen()` time per spec by size, and for 5 ordinary specs one by one vs joined into
one text; (2) how many corpus attacks blocked as one tool's description still are when that description is
the 4th of 5 tool specs screened as one text, and how many sets of 5 benign descriptions are blocked either way.
The shipped model was trained on this corpus, so (2) is in-sample: compare the two columns, not with held-out figures.
    python benchmarks/tool_specs.py
"""
from __future__ import annotations

import os
import random
import sys
import time

from common import ROOT, percentile

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "screening", "corpus"))
from dataset import load_rows  # noqa: E402

from chalicelib.agent.tools import tool_spec_text  # noqa: E402
from chalicelib.screening import screen  # noqa: E402

ORDINARY = ["Look up an order by its id and return its status, items and shipping address.",
            "Get the current weather for a city. Returns temperature in Celsius and conditions.",
            "Search the product catalogue by keyword; returns at most 20 matches with prices.",
            "Create a support ticket for the customer with a subject and a body.",
            "Send an email to the given address with subject and body text."]


def spec_text(index: int, description: str) -> str:
    return tool_spec_text({"toolSpec": {"name": f"tool_{index}", "description": description, "inputSchema": {"json": {
        "type": "object", "properties": {"query": {"type": "string", "description": "the query text"}}}}}})


def joined(descriptions: list[str]) -> str:
    return "\n\n".join(spec_text(index, description) for index, description in enumerate(descriptions))


def median_ms(function, runs: int = 200) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.process_time()
        function()
        samples.append((time.process_time() - started) * 1000)
    return percentile(samples, 50), percentile(samples, 99)


def main() -> None:
    rows = load_rows()
    benign = [row["text"] for row in rows if row["label"] == "benign"]
    screen("warm the model up before timing anything")
    random.seed(7)
    prose = " ".join(random.sample(benign, 300))
    for size in (200, 800, 2_000, 4_000):
        text = spec_text(0, prose[:size])
        print("screen() of one spec with a %5d-char description: p50 %.2f ms, p99 %.2f ms (CPU)" % ((size,) + median_ms(lambda: screen(text))))
    texts = [spec_text(index, description) for index, description in enumerate(ORDINARY)]
    print("5 ordinary specs one by one: p50 %.2f ms; joined: p50 %.2f ms" % (
        median_ms(lambda: [screen(text) for text in texts])[0], median_ms(lambda: screen(joined(ORDINARY)))[0]))
    attacks = [row["text"] for row in rows if row["label"] == "attack" and 20 <= len(row["text"]) <= 4_000]
    alone = together = lost = 0
    for attack in attacks:
        blocked_alone = not screen(spec_text(3, attack)).allowed
        blocked_together = not screen(joined(ORDINARY[:3] + [attack] + ORDINARY[3:4])).allowed
        alone, together, lost = alone + blocked_alone, together + blocked_together, lost + (blocked_alone and not blocked_together)
    print(f"{len(attacks)} attacks as the 4th of 5 tool descriptions: blocked alone {alone}, joined {together}; "
          f"blocked alone but not joined: {lost}")
    short = [text for text in benign if 20 <= len(text) <= 300]
    sets = [random.sample(short, 5) for _ in range(400)]
    print("400 sets of 5 benign descriptions: a spec blocked alone in %d, the joined text blocked in %d" % (
        sum(any(not screen(spec_text(i, d)).allowed for i, d in enumerate(five)) for five in sets),
        sum(not screen(joined(five)).allowed for five in sets)))


if __name__ == "__main__":
    main()
