"""Write the reader cases of the corpus whose inputs are binary or encoded (run once; committed).

python tests/data/corpus/_make_reader_cases.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
TAS4 = "id,tas4_1,tas4_2,tas4_3,tas4_4\nA,1,2,3,4\nB,2,2,2,2\n"


def case(name: str, files: dict[str, bytes], args: list[str], code: int, message: list[str],
         description: str) -> None:  # fmt: skip
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    for file, content in files.items():
        (folder / file).write_bytes(content)
    toml = f'description = "{description}"\nargs = {json.dumps(args)}\nexit = {code}\n'
    toml += f"message = {json.dumps(message)}\n"
    if code == 0:
        toml += 'expect_files = ["{out}/scores.csv"]\n'
    (folder / "case.toml").write_text(toml, encoding="utf-8")


def score(file: str, *extra: str, instrument: str = "tas4") -> list[str]:
    return [
        "score",
        "{in}/" + file,
        "--instrument",
        instrument,
        *extra,
        "--out",
        "{out}/scores.csv",
    ]


def workbook(sheets: dict[str, list[list]]) -> bytes:
    import io

    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def main() -> None:
    rows = [["id", "tas4_1", "tas4_2", "tas4_3", "tas4_4"], ["A", 1, 2, 3, 4]]
    more = [["id", "tas4_1", "tas4_2", "tas4_3", "tas4_4"], ["B", 2, 2, 2, 2]]
    two = workbook({"wave 1": rows, "more": more})
    case("readers_utf16_tab", {"export.txt": TAS4.replace(",", "\t").encode("utf-16")},
         score("export.txt", "--format", "csv"), 0, ["scored 2"],
         "a UTF-16 tab-separated export (Excel's Unicode text) is read")  # fmt: skip
    case("readers_semicolon_decimal_comma",
         {"export.csv": b"id;who5_1;who5_2;who5_3;who5_4;who5_5\nA;1,0;2;3;4;5\n"},
         score("export.csv", instrument="who5"), 0, ["scored 1"],
         "a semicolon-separated export with decimal commas (European Excel) is read")  # fmt: skip
    case("readers_wrong_delimiter_given", {"export.csv": TAS4.replace(",", ";").encode()},
         score("export.csv", "--delimiter", ","), 2, ["delimiter looks wrong", "semicolon"],
         "a delimiter given that the file does not use is named, with the one it does")  # fmt: skip
    case("readers_xlsx_two_sheets", {"export.xlsx": two}, score("export.xlsx"), 2,
         ["data on 2 sheets", "wave 1, more", "--sheet"],
         "a workbook with responses on two sheets is refused until --sheet names one")  # fmt: skip
    case("readers_xlsx_sheet_named", {"export.xlsx": two}, score("export.xlsx", "--sheet", "more"),
         0, ["scored 1", "wave 1 also hold data"],
         "--sheet reads the named sheet and says which other sheets hold data")  # fmt: skip
    case("readers_xlsx_no_such_sheet", {"export.xlsx": two},
         score("export.xlsx", "--sheet", "wave 2"), 2, ["no sheet 'wave 2'", "wave 1, more"],
         "a sheet that does not exist is refused, listing the sheets")  # fmt: skip
    case("readers_half_point", {"export.csv": TAS4.replace("A,1,2", "A,1,2.5").encode()},
         score("export.csv"), 2, ["row 2", "tas4_2", "not a whole number"],
         "a half-point answer to a whole-number item is refused")  # fmt: skip
    case("readers_recode_hint",
         {"export.csv": b"id,who5_1,who5_2,who5_3,who5_4,who5_5\nA,6,5,4,3,2\nB,1,2,3,4,6\n"},
         score("export.csv", instrument="who5"), 2, ["exactly one above", "--recode 1-6"],
         "answers coded 1-6 for a 0-5 scale: the error suggests --recode")  # fmt: skip
    case("readers_recode_applied",
         {"export.csv": b"id,who5_1,who5_2,who5_3,who5_4,who5_5\nA,6,5,4,3,2\nB,1,2,3,4,6\n"},
         score("export.csv", "--recode", "1-6", instrument="who5"), 0, ["scored 2"],
         "--recode 1-6 shifts the answers onto 0-5")  # fmt: skip
    mapping = "column,item\n" + "".join(f"Q2_{k},who5_{k}\n" for k in range(1, 6))
    case("readers_mapped_column_name",
         {"export.csv": b"id,Q2_1,Q2_2,Q2_3,Q2_4,Q2_5\nA,9,5,4,3,2\n", "map.csv": mapping.encode()},
         score("export.csv", "--item-map", "{in}/map.csv", instrument="who5"), 2,
         ["column 'Q2_1 (who5_1)'", "value 9"],
         "an error names the export's own column with the item id in parentheses")  # fmt: skip
    case(
        "readers_header_only",
        {"export.csv": TAS4.splitlines(True)[0].encode()},
        score("export.csv"),
        2,
        ["export.csv"],
        "an export with a header and no rows is refused",
    )
    bom = "\ufeffid,tas4_1,tas4_2,tas4_3,tas4_4\nA,1,2,3,4\n".encode() + b"B,\xff,2,2,2\n"
    offset = bom.index(b"\xff")
    case("readers_bom_offset", {"export.csv": bom}, score("export.csv"), 2,
         [f"byte offset {offset}", "line 3"],
         "after a byte order mark the offset of a bad byte counts from the file start")  # fmt: skip
    # openpyxl stores a formula without a computed value, as many scripts do
    formulas = workbook({"answers": [rows[0], ["A", 1, 2, "=B2+1", 4], ["B", 2, 2, 2, 2]]})
    case(
        "readers_xlsx_uncalculated_formula",
        {"export.xlsx": formulas},
        score("export.xlsx"),
        2,
        ["row 2", "tas4_3", "formula without a computed value", "=B2+1"],
        "a formula that was never calculated is refused, not read as a blank answer",
    )
    case(
        "readers_ids_leading_zeros",
        {"export.csv": TAS4.replace("A,", "007,").encode()},
        score("export.csv"),
        0,
        ["scored 2"],
        "ids keep their leading zeros (labels, not numbers)",
    )


if __name__ == "__main__":
    main()
