"""LineSplitter: complete lines only, bounded memory on hostile input."""

from __future__ import annotations

from babysit.reading.lines import LineSplitter


def test_partial_last_line_waits_for_its_newline():
    splitter = LineSplitter()
    assert splitter.feed(b"step=1 loss=2\nstep=2 lo") == ["step=1 loss=2"]
    assert splitter.feed(b"ss=1.9\n") == ["step=2 loss=1.9"]


def test_carriage_returns_end_lines_like_newlines():
    splitter = LineSplitter()
    assert splitter.feed(b" 1/9 [..]\r 2/9 [..]\r 3/9 [..]\n") == [" 1/9 [..]", " 2/9 [..]",
                                                                     " 3/9 [..]"]


def test_overlong_line_is_cut_and_memory_stays_bounded():
    splitter = LineSplitter(max_line=1024)
    for _ in range(50):  # 50 MB without a newline, in 1 MB pieces
        assert splitter.feed(b"x" * (1024 * 1024)) == []
        assert splitter.pending_bytes <= 1024
    lines = splitter.feed(b"\nstep=1 loss=2\n")
    assert lines == ["x" * 1024, "step=1 loss=2"]
    assert splitter.cut_lines == 1


def test_invalid_utf8_and_nul_bytes_decode_without_error():
    splitter = LineSplitter()
    [line] = splitter.feed(b"loss=\xff\xfe1.5\x00\x00 ok\n")
    assert "\x00" not in line and "ok" in line


def test_flush_returns_the_unterminated_last_line():
    splitter = LineSplitter()
    splitter.feed(b"Training finished")
    assert splitter.flush() == ["Training finished"]
    assert splitter.flush() == []
