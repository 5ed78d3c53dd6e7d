"""Tevet & Berant's diversity test sets (decTest, conTest, McDiv, McDiv_nuggets) as a ``datasets``
builder.

Tevet & Berant, "Evaluating the Evaluation of Diversity in Natural Language Generation"
(EACL 2021): §3 (decTest, the softmax temperature as diversity parameter; conTest, binary
content diversity from crowd workers), §4 (absHDS, the absolute human diversity score),
§6.3-6.4 (the meta-evaluation they serve), §6.4 and App. C.2 (McDiv, McDiv_nuggets). One config per
released file, named as the file without its ``no_hds``/``with_hds`` tag, e.g.
``con_test_200_resp_gen``:

============================  ==========================================  =========================
config family                 released file                               rows (story/resp/prompt)
============================  ==========================================  =========================
``dec_test_1000_<task>``      ``decTest/dec_test_1000_no_hds_<task>.csv``  985 / 994 / 1000
``dec_test_200_<task>``       ``decTest/dec_test_200_with_hds_<task>.csv`` 203 / 203 / 203 (absHDS)
``con_test_200_<task>``       ``conTest/con_test_200_with_hds_<task>.csv`` 250 / 220 / 200 (absHDS)
``mcdiv_all_<task>``          ``McDiv/mcdiv_all_no_hds_<task>.csv``        2000 / 2002 / 2000
``mcdiv_nuggets_<task>``      ``McDiv_nuggets/mcdiv_nuggets_no_hds_…``     1012 / 1049 / 1008
``mcdiv_nuggets_200_<task>``  ``McDiv_nuggets/mcdiv_nuggets_200_with_hds…`` 200 / 200 / 200 (absHDS)
============================  ==========================================  =========================

with ``<task>`` one of ``story_gen``, ``resp_gen``, ``prompt_gen``. Each config has one
``test`` split; row order is the file's (``sample_id`` is not unique: a conTest context
appears once per class). Responses are kept verbatim, empty strings included.

The authors distribute the files as ``data.zip``
(http://diversity-eval.s3-us-west-2.amazonaws.com/data.zip; ``raw/`` and ``with_metrics/`` folders),
whose checksum is not published. The builder therefore downloads each CSV from a commit of
the fork ``fabriceyhc/diversity-eval`` that holds the unzipped archive, pinned, and checks
every file against its sha256; ``data_dir`` may point at an unzipped ``data.zip`` (or any
folder holding the CSVs), which is checked the same way.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, ClassVar

import datasets

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, resolve_source
from dialeval.datasets_scripts._text_files import checked_lines, open_release_text
from dialeval.io import response_columns

_CITATION = """\
@inproceedings{tevet-berant-2021-evaluating,
    title = "Evaluating the Evaluation of Diversity in Natural Language Generation",
    author = "Tevet, Guy and Berant, Jonathan",
    booktitle = "Proceedings of the 16th Conference of the European Chapter of the Association for Computational Linguistics: Main Volume",
    year = "2021",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2021.eacl-main.25",
    pages = "326--346",
}
"""  # noqa: E501
_DESCRIPTION = (
    "Sets of generated or crowd-written responses with a known diversity parameter, for measuring "
    "how well a diversity metric tracks diversity: decTest (temperature), conTest / McDiv / "
    "McDiv_nuggets (content diversity class, 1 = high, 0 = low), some with absolute human "
    "diversity scores (absHDS)."
)
_HOMEPAGE = "https://github.com/GuyTevet/diversity-eval"
_LICENSE = "MIT (Copyright (c) 2020 Guy Tevet)"
FORK_COMMIT = "de683e4d13095c29e940ac82eda5e577673b0b53"
_FORK_URL = f"https://raw.githubusercontent.com/fabriceyhc/diversity-eval/{FORK_COMMIT}/data/with_metrics/{{path}}"

TASKS = ("story_gen", "resp_gen", "prompt_gen")
#: config family -> file path pattern (relative to with_metrics/ or raw/).
FAMILIES = {
    "dec_test_1000": "decTest/dec_test_1000_no_hds_{task}.csv",
    "dec_test_200": "decTest/dec_test_200_with_hds_{task}.csv",
    "con_test_200": "conTest/con_test_200_with_hds_{task}.csv",
    "mcdiv_all": "McDiv/mcdiv_all_no_hds_{task}.csv",
    "mcdiv_nuggets": "McDiv_nuggets/mcdiv_nuggets_no_hds_{task}.csv",
    "mcdiv_nuggets_200": "McDiv_nuggets/mcdiv_nuggets_200_with_hds_{task}.csv",
}
# (with_metrics/, raw/) digests of the released files.
_SHA256 = {
    "McDiv/mcdiv_all_no_hds_prompt_gen.csv": (
        "5e10c38e901dc16b451d7df2c0b2517a0c0055a41b5d5876da605793f61ab2be",
        "99e1b4f6fd39f11b2a8ea0f71a3e63c7a73e131bc9ab5c1f40679c589fac3ada",
    ),
    "McDiv/mcdiv_all_no_hds_resp_gen.csv": (
        "c70cc44dd4717aeecd8206c8d7eade6a80707924f5c806bb88146a90261632c0",
        "b9ee7b9c804a0c698c9b3bac8735a4fedac12de04684ee213646d5348f75f3ce",
    ),
    "McDiv/mcdiv_all_no_hds_story_gen.csv": (
        "483e8c647863d53c114e7316624abdc5b6609c165c0e2d1b7be122b21e0f734a",
        "ad2104d8570e7fc938d19d896d218fe2ead434b184dea58dd72d54b92c743fb1",
    ),
    "McDiv_nuggets/mcdiv_nuggets_200_with_hds_prompt_gen.csv": (
        "1e5a3552ca22135bd2884657812512d6e6fba5851707bb6ce7da632b58d27d73",
        "27cbe900d289b570f07ea15909c48a5152c9d11adf1109362efb2eb5a047baf8",
    ),
    "McDiv_nuggets/mcdiv_nuggets_200_with_hds_resp_gen.csv": (
        "76158f837ce7467ef2b7bac31be8ff4219231af05c6faeef98c40252014f399c",
        "d5ae6f8391197ac2036f474bb3927cbc3fb933be484d687006f8ddb210bfaa1e",
    ),
    "McDiv_nuggets/mcdiv_nuggets_200_with_hds_story_gen.csv": (
        "a1bb4e219d22babac09982580bad5a16eb0370e14d8029a2ff4fe9ed8078c595",
        "b4541917179be13de8e2af8bb0975ab789610785ed9b2fca5bcdbb004f3f2f7f",
    ),
    "McDiv_nuggets/mcdiv_nuggets_no_hds_prompt_gen.csv": (
        "4f22de799f7a207831988980da9611f254f167055cca4da3f0d1ba89a1b6a329",
        "f64124a6768a52be160c1da001c501f3e014f966c6cbe8f75e7a975c0c4aec57",
    ),
    "McDiv_nuggets/mcdiv_nuggets_no_hds_resp_gen.csv": (
        "e81ed325adaac9176b329e5f8800afbd864a000eed54d86b459019b32359b9aa",
        "28fce0160dff05a66b1042ec086fde8b9094668b5f622a851037aafef20d22c0",
    ),
    "McDiv_nuggets/mcdiv_nuggets_no_hds_story_gen.csv": (
        "adcf8ea3e0340bdc3bd84a9aa84db7b1398383818d3d5a67a526d0711019f5cc",
        "07dd00edd00ac92058fca0a75fb4b0f10e342d25ece850e404683261aa4a2985",
    ),
    "conTest/con_test_200_with_hds_prompt_gen.csv": (
        "6358067eaf516e06b85af9c3d0c60321c6a0842eb9b9cef1b10f5bd04a545b90",
        "bfbf2b8c69febd9f9e41e6324acace428d3c6f58099bc2aa9142fc79105a1be1",
    ),
    "conTest/con_test_200_with_hds_resp_gen.csv": (
        "bfc04654c9aaaa968a1bfb118332f2ec19c90f4de035c561303c331e579bb7e0",
        "c88a440adb1f2b1d27c5ad20762026a7b6ac27c32e5eab27b049c175e72cccdc",
    ),
    "conTest/con_test_200_with_hds_story_gen.csv": (
        "18488ab04513a5bf90506c3c25e52fdc745aba7a70eed24fbb0d21dd820e9fcc",
        "f534d2c06afacc8c579d9648639642b9be4742fcad2a2c4269c4b03ba79c7739",
    ),
    "decTest/dec_test_1000_no_hds_prompt_gen.csv": (
        "0963cec4e6164721404552ad36133a6584a88a847954c99e2a8ae2ad22d80bb4",
        "1a21ad18d9b1ea61066de7f93ca286d3abfb56a7e752c667ad25c7a0e9ab54eb",
    ),
    "decTest/dec_test_1000_no_hds_resp_gen.csv": (
        "953caefdbcd5915bad8c216effec41653c969338899e64762840bbbd9acb2624",
        "1692e4041884d2463247f5b97191d2e1ae63d4bf0514b3efbbe30910e5f8f901",
    ),
    "decTest/dec_test_1000_no_hds_story_gen.csv": (
        "5369093446f4ac961ab7e3a4c6e437535b234d86fe28fe3fd4bbe717cef9b961",
        "db9f082d135c75c0a032b40a961efd5f84e71a349eb51592b6edaf751d89b454",
    ),
    "decTest/dec_test_200_with_hds_prompt_gen.csv": (
        "d8f8151b8fec6f685ef2e3e2a29915be8ec5d50f06aca3cee14331afee4f9144",
        "a925a991c80ecf7293898b63e87773707baa9fe7a7f0843f65c475a101c2e883",
    ),
    "decTest/dec_test_200_with_hds_resp_gen.csv": (
        "0cf3ae1b1f1137f68ab6763f7381a20fde1f6ac44004df9d5b3101e9138c47fe",
        "f71c6a69cfd1b5c4d687cbf31befd854f9ad43fde445ad144d44b1ed96ff5dfd",
    ),
    "decTest/dec_test_200_with_hds_story_gen.csv": (
        "e2775a1d40633700858dfe40a5f5a0404d5df7aca52c96736ebc9dd9a059a5c7",
        "8adbc20ebc71a357cb23cae2f6f24d01b8046f665461e37a1ed454438b2ea6b0",
    ),
}

#: The released per-set metric scores (``with_metrics/`` files): field -> column names
#: (the fork's CamelCase, upstream's snake_case). Upstream's ``bert_sts`` is not in the release.
RELEASED_SCORE_COLUMNS = {
    "distinct_n": ("metric_AveragedDistinctNgrams", "metric_averaged_distinct_ngrams"),
    "cos_sim": ("metric_AveragedCosineSimilarity", "metric_averaged_cosine_similarity"),
    "sent_bert": ("metric_SentBert", "metric_sent_bert"),
    "bert_score": ("metric_BertScore", "metric_bert_score"),
}


def source_file(family: str, task: str) -> SourceFile:
    relative = FAMILIES[family].format(task=task)
    name = relative.split("/")[1]
    local_paths = (
        f"with_metrics/{relative}",
        f"data/with_metrics/{relative}",
        f"raw/{relative}",
        f"data/raw/{relative}",
        relative,
        name,
    )
    return SourceFile(name, _FORK_URL.format(path=relative), local_paths, _SHA256[relative])


class DiversityEvalConfig(datasets.BuilderConfig):
    """One released file; ``verify_checksums=False`` accepts edited copies."""

    def __init__(
        self,
        *args: Any,
        family: str = "con_test_200",
        task: str = "resp_gen",
        verify_checksums: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.family = family
        self.task = task
        self.verify_checksums = verify_checksums


def _optional_float(row: dict, column: str, where: str) -> float | None:
    value = row.get(column)
    if value is None or value.strip() == "":
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{where}: column {column!r} must be a number, got {value!r}") from None


class DiversityEval(ReleaseBuilder):
    """decTest / conTest / McDiv / McDiv_nuggets (Tevet & Berant 2021); see the module docstring."""

    BUILDER_CONFIG_CLASS = DiversityEvalConfig
    BUILDER_CONFIGS: ClassVar[list[DiversityEvalConfig]] = [
        DiversityEvalConfig(
            name=f"{family}_{task}",
            family=family,
            task=task,
            version=datasets.Version("1.0.0"),
            description=f"{FAMILIES[family].format(task=task)} of the released data",
        )
        for family in FAMILIES
        for task in TASKS
    ]
    DEFAULT_CONFIG_NAME = "con_test_200_resp_gen"

    def _info(self) -> datasets.DatasetInfo:
        score = datasets.Value("float64")
        features = datasets.Features(
            {
                "sample_id": datasets.Value("string"),
                "context": datasets.Value("string"),
                "responses": datasets.List(datasets.Value("string")),
                "diversity_parameter": datasets.Value("float64"),
                "parameter_name": datasets.Value("string"),
                "abs_hds_mean": score,
                "abs_hds_std": score,
                "released_scores": {name: score for name in RELEASED_SCORE_COLUMNS},
            }
        )
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=features,
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=_CITATION,
        )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        source = source_file(self.config.family, self.config.task)
        path = resolve_source(
            source, dl_manager, self.config.data_dir, verify=self.config.verify_checksums
        )
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"path": path})]

    def _generate_examples(self, path: str) -> Iterator[tuple[int, dict[str, Any]]]:
        # utf-8 explicitly: the released files broke Windows' default code page.
        with open_release_text(path, newline="") as handle:
            reader = csv.DictReader(checked_lines(handle, path))
            columns = response_columns(list(reader.fieldnames or []), path)
            for index, row in enumerate(reader):
                where = f"{path}, record {index}"
                parameter = _optional_float(row, "label_value", where)
                if parameter is None:
                    raise ValueError(f"{where}: `label_value` (the diversity parameter) is missing")
                released = {
                    field: next((_optional_float(row, c, where) for c in names if c in row), None)
                    for field, names in RELEASED_SCORE_COLUMNS.items()
                }
                yield (
                    index,
                    {
                        "sample_id": row.get("sample_id"),
                        "context": row.get("context"),
                        "responses": [row[column] for column in columns],
                        "diversity_parameter": parameter,
                        "parameter_name": row.get("label_name"),
                        "abs_hds_mean": _optional_float(row, "metric_abs_hds_mean", where),
                        "abs_hds_std": _optional_float(row, "metric_abs_hds_std", where),
                        "released_scores": released,
                    },
                )
