"""The package's progress records shown on a stream and hidden again."""

from __future__ import annotations

import io
import logging

from accelsched.logs import show_records


def test_records_of_the_logger_and_those_below_it_are_shown_in_the_format_until_undone() -> None:
    stream = io.StringIO()
    package = logging.getLogger("accelsched")
    level, handlers = package.level, list(package.handlers)
    hide = show_records(stream, "%(name)s| %(message)s")
    try:
        logging.getLogger("accelsched.formulations.partition.capacity").info("pair %s starts", "128/0")
        logging.getLogger("accelsched").debug("not at INFO")
        logging.getLogger("somebody.else").warning("not ours")
    finally:
        hide()
    logging.getLogger("accelsched.formulations").info("after")
    assert stream.getvalue() == "accelsched.formulations.partition.capacity| pair 128/0 starts\n"
    assert (package.level, package.handlers) == (level, handlers)


def test_a_sub_logger_can_be_shown_alone_with_a_date_format() -> None:
    stream = io.StringIO()
    hide = show_records(stream, "%(asctime)s %(message)s", logger="accelsched.bench", datefmt="%Y")
    try:
        logging.getLogger("accelsched.bench.partition_tables").info("row")
        logging.getLogger("accelsched.formulations").warning("elsewhere")
    finally:
        hide()
    year, message = stream.getvalue().split()
    assert len(year) == 4 and year.isdigit() and message == "row"


def test_debug_records_are_shown_from_the_debug_level_and_the_level_is_restored() -> None:
    stream = io.StringIO()
    package = logging.getLogger("accelsched")
    level = package.level
    hide = show_records(stream, "%(levelname)s %(message)s", level=logging.DEBUG)
    try:
        logging.getLogger("accelsched.formulations.partition.colgen").debug("exact pricing, round 1")
        logging.getLogger("accelsched.formulations.partition.capacity").info("pair 128/0 KB starts")
    finally:
        hide()
    assert stream.getvalue().splitlines() == ["DEBUG exact pricing, round 1", "INFO pair 128/0 KB starts"]
    assert package.level == level
