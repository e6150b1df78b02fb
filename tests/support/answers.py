"""Answers and context documents made of fragments that exercise every step of a verification.

Shared by the property tests that compare two ways of verifying the same answer
(tests/engine/test_speed_equivalence.py, tests/engine/test_plain.py): claims and their terminators, inline
markers, quotes, statistics, identifiers, case law, statutes, non-ASCII words.
"""

from __future__ import annotations

from hypothesis import strategies as st

ANSWER_PARTS = st.sampled_from(
    [
        "The museum opens at nine.", "Entry is free", " [1]", " [2, 3]", " [Source 9]", "【2】",
        ' "opens at nine"', " “Dragons”", " 12%", " $3.5 million", " doi:10.1234/abc.def",
        " Smith v. Jones, 5 U.S. 137 (1803)", " 42 U.S.C. § 1983", " e.g.", " Dr.", " No. 5",
        "\n", ". ", "! ", "Straße", " ⒜", " café", " x_y", " (n = 40)", " p < 0.05",
        " PMID: 123456", " https://example.org/a",
    ]
)  # fmt: skip

DOCS = st.lists(
    st.sampled_from(
        [
            "The museum opens at nine. Entry is free on Sundays.",
            "Revenue rose 12 percent to $3,500,000 in 2023. See doi:10.1234/abc.def.",
            "Smith v. Jones, 5 U.S. 137 (1803) held it. 42 U.S.C. § 1983 applies.",
            "Dragons guard the entrance of the café, (n = 40).",
            {"content": "Entry is free on Sundays [1]."},
        ]
    ),
    max_size=4,
)
