"""The shared 2000-line / 50 KB limits."""

from __future__ import annotations

from pi_tui.tools.truncate import (
    MAX_BYTES,
    MAX_LINES,
    format_size,
    split_lines,
    truncate_head,
    truncate_tail,
)


def test_small_text_is_kept_whole() -> None:
    text, truncation = truncate_head("a\nb\n")
    assert text == "a\nb\n"
    assert not truncation.truncated
    assert truncation.total_lines == 2
    assert truncation.truncated_by is None


def test_split_lines_treats_a_final_newline_as_a_terminator() -> None:
    assert split_lines("") == []
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]


def test_head_keeps_the_first_lines_by_line_limit() -> None:
    text, truncation = truncate_head("\n".join(str(n) for n in range(1, 5001)))
    assert text.splitlines()[0] == "1"
    assert text.splitlines()[-1] == str(MAX_LINES)
    assert truncation.truncated
    assert truncation.truncated_by == "lines"
    assert (truncation.total_lines, truncation.output_lines) == (5000, MAX_LINES)


def test_tail_keeps_the_last_lines_by_line_limit() -> None:
    text, truncation = truncate_tail("\n".join(str(n) for n in range(1, 5001)))
    assert text.splitlines()[0] == "3001"
    assert text.splitlines()[-1] == "5000"
    assert truncation.truncated_by == "lines"
    assert truncation.output_lines == MAX_LINES


def test_byte_limit_wins_when_it_comes_first() -> None:
    line = "x" * 99
    source = "\n".join([line] * 1000)  # 100 KB in 1000 lines
    head, truncation = truncate_head(source)
    assert truncation.truncated_by == "bytes"
    assert truncation.output_bytes <= MAX_BYTES
    assert truncation.output_lines == MAX_BYTES // 100
    assert head == "\n".join([line] * truncation.output_lines)
    tail, tail_truncation = truncate_tail(source)
    assert tail_truncation.truncated_by == "bytes"
    assert len(tail.encode()) <= MAX_BYTES


def test_an_oversized_single_line_is_cut_on_a_utf8_boundary() -> None:
    line = "a" + "é" * MAX_BYTES  # "é" is two bytes: the cut falls inside a character
    head, truncation = truncate_head(line + "\nnext")
    assert truncation.partial_line
    assert truncation.truncated_by == "bytes"
    assert (truncation.total_lines, truncation.output_lines) == (2, 1)
    assert head == "a" + "é" * ((MAX_BYTES - 1) // 2)
    tail, tail_truncation = truncate_tail("first\n" + "é" * MAX_BYTES + "a")
    assert tail_truncation.partial_line
    assert tail == "é" * ((MAX_BYTES - 1) // 2) + "a"


def test_details_use_camel_case() -> None:
    _, truncation = truncate_head("x\n" * 3000)
    assert truncation.as_details() == {
        "truncated": True,
        "truncatedBy": "lines",
        "totalLines": 3000,
        "totalBytes": 6000,
        "outputLines": 2000,
        "outputBytes": 3999,
        "partialLine": False,
    }


def test_format_size() -> None:
    assert format_size(512) == "512 B"
    assert format_size(MAX_BYTES) == "50 KB"
    assert format_size(1536) == "1.5 KB"
    assert format_size(3 * 1024 * 1024) == "3 MB"
