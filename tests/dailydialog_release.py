"""A synthetic DailyDialog release in the official archive's nested layout, for the builder's tests
and the Han et al. recipe's smoke tests: ``ijcnlp_dailydialog.zip`` holding
``ijcnlp_dailydialog/<split>.zip``, each holding ``<split>/dialogues_<split>.txt`` and its act and
emotion files."""

from __future__ import annotations

import io
import zipfile

#: split -> (dialogue line, act line, emotion line) per dialogue, written as the release writes them:
#: " __eou__ " between turns and a trailing "__eou__"; label lines end with a space.
RELEASE = {
    "train": [
        (
            (
                "Say , Jim , how about going for a few beers after dinner ? __eou__ You know that is tempting but is really "
                "not good for our fitness . __eou__ What do you mean ? __eou__"
            ),
            "3 4 2 ",
            "0 0 0 ",
        ),
        ("Can you do push-ups ? __eou__ Of course I can . __eou__", "2 1 ", "0 4 "),
    ],
    "validation": [("Good morning , sir . __eou__ Good morning . __eou__", "1 1 ", "0 0 ")],
    "test": [
        # a turn with spaces around it and a trailing space after the last __eou__ (the release has both)
        (
            "Hey man , you wanna buy some weed ?  __eou__  Some what ? __eou__ Weed ! __eou__ ",
            "3 2 3 ",
            "0 6 1 ",
        ),
        ("The taxi drivers are on strike again . __eou__ What for ? __eou__", "1 2 ", "1 0 "),
    ],
}


def split_zip(
    split: str, rows, *, dialog_text: str | None = None, act_text: str | None = None
) -> bytes:
    texts = {
        f"{split}/dialogues_{split}.txt": dialog_text
        if dialog_text is not None
        else "".join(r[0] + "\n" for r in rows),
        f"{split}/dialogues_act_{split}.txt": act_text
        if act_text is not None
        else "".join(r[1] + "\n" for r in rows),
        f"{split}/dialogues_emotion_{split}.txt": "".join(r[2] + "\n" for r in rows),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as inner:
        for name, text in texts.items():
            # lets a test write bytes that are not UTF-8
            inner.writestr(name, text.encode("utf-8", "surrogateescape"))
    return buffer.getvalue()


def write_archive(folder, release=RELEASE, **test_split_overrides):
    """The release's layout: ijcnlp_dailydialog.zip > ijcnlp_dailydialog/<split>.zip > <split>/dialogues_*.txt."""
    path = folder / "ijcnlp_dailydialog.zip"
    with zipfile.ZipFile(path, "w") as outer:
        outer.writestr("ijcnlp_dailydialog/readme.txt", "DailyDialog\n")
        for split, rows in release.items():
            overrides = test_split_overrides if split == "test" else {}
            outer.writestr(f"ijcnlp_dailydialog/{split}.zip", split_zip(split, rows, **overrides))
    return path


def write_archive_with_large_member(folder, size: int, inside: str = "dialogues_test.txt"):
    """The release's layout whose test split holds ``inside`` (a text file of the split zip, or the
    split zip itself with ``inside="test.zip"``) unpacking to ``size`` bytes of ``a``: a zip bomb,
    small on disk. Written a block at a time, so the test itself holds no ``size`` bytes."""
    block = b"a" * (1 << 20)

    def large(archive: zipfile.ZipFile, name: str) -> None:
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as member:
            for start in range(0, size, len(block)):
                member.write(block[: size - start])

    if inside == "test.zip":
        path = folder / "ijcnlp_dailydialog.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as outer:
            for split, rows in RELEASE.items():
                if split != "test":
                    outer.writestr(f"ijcnlp_dailydialog/{split}.zip", split_zip(split, rows))
            large(outer, "ijcnlp_dailydialog/test.zip")
        return path
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as inner:
        for name in ("dialogues_act_test.txt", "dialogues_emotion_test.txt"):
            inner.writestr(f"test/{name}", "1 \n")
        large(inner, f"test/{inside}")
    path = folder / "ijcnlp_dailydialog.zip"
    with zipfile.ZipFile(path, "w") as outer:
        for split, rows in RELEASE.items():
            if split != "test":
                outer.writestr(f"ijcnlp_dailydialog/{split}.zip", split_zip(split, rows))
        outer.writestr("ijcnlp_dailydialog/test.zip", buffer.getvalue())
    return path
