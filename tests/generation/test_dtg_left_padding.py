"""A right-padded batch for a decoder-only model is re-padded on the left inside DTG,
so its outputs equal those of a left-padded call, and the caller's tensors are not changed."""

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.dtg_padding import is_left_padded, left_padded
from dialeval.generation.objectives import NLIContradictions
from dialeval.metrics.nli_diversity.nli import CONTRADICTION

CONTEXTS = ["hello there , how are you today ?", "i like music", "tell me a story"]
GENERATE = {"max_new_tokens": 5, "min_new_tokens": 2}


class RuleScorer:
    """A pair contradicts when its texts' lengths sum to a multiple of 3 (forces some resampling)."""

    def pair_probabilities(self, premises, hypotheses):
        return np.array(
            [
                np.eye(3)[CONTRADICTION if (len(p) + len(h)) % 3 == 0 else 1]
                for p, h in zip(premises, hypotheses)
            ]
        )


def test_left_padded_moves_each_rows_pads_to_the_left_without_touching_the_callers_tensors():
    ids = torch.tensor([[5, 6, 7, 1, 1], [8, 9, 1, 1, 1], [2, 3, 4, 5, 6]])
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]])
    given = {
        "input_ids": ids.clone(),
        "attention_mask": mask.clone(),
        "token_type_ids": ids.clone() * 10,
    }
    result = left_padded(given)
    assert result["input_ids"].tolist() == [[1, 1, 5, 6, 7], [1, 1, 1, 8, 9], [2, 3, 4, 5, 6]]
    assert result["attention_mask"].tolist() == [[0, 0, 1, 1, 1], [0, 0, 0, 1, 1], [1, 1, 1, 1, 1]]
    assert result["token_type_ids"].tolist() == [
        [10, 10, 50, 60, 70],
        [10, 10, 10, 80, 90],
        [20, 30, 40, 50, 60],
    ]
    assert torch.equal(given["input_ids"], ids) and torch.equal(given["attention_mask"], mask)
    assert is_left_padded(result["attention_mask"]) and not is_left_padded(mask)


def test_a_left_padded_or_unmasked_batch_is_returned_as_is():
    left = {
        "input_ids": torch.tensor([[1, 5], [6, 7]]),
        "attention_mask": torch.tensor([[0, 1], [1, 1]]),
    }
    assert left_padded(left) is left
    bare = {"input_ids": torch.tensor([[5, 1]])}
    assert left_padded(bare) is bare


def test_a_gap_inside_a_prompt_is_refused_naming_attention_mask():
    with pytest.raises(ValueError, match=r"`attention_mask` row 1 masks tokens inside its prompt"):
        left_padded(
            {
                "input_ids": torch.tensor([[5, 6, 7], [5, 6, 7]]),
                "attention_mask": torch.tensor([[1, 1, 1], [1, 0, 1]]),
            }
        )
    with pytest.raises(
        ValueError, match=r"`attention_mask` must be a tensor of the shape of `input_ids`"
    ):
        left_padded(
            {"input_ids": torch.tensor([[5, 6, 7]]), "attention_mask": torch.tensor([[1, 0]])}
        )


@pytest.fixture(scope="module", params=["gpt2", "mistral"])
def causal(request, tiny_gpt2_path, tiny_mistral_path):
    path = tiny_gpt2_path if request.param == "gpt2" else tiny_mistral_path
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    left = AutoTokenizer.from_pretrained(path, padding_side="left")
    right = AutoTokenizer.from_pretrained(path, padding_side="right")
    return model, left, right


def test_the_direct_api_gives_a_right_padded_batch_the_left_padded_result(causal, capfd):
    model, left, right = causal
    right_batch = right(CONTEXTS, return_tensors="pt", padding=True)
    assert not is_left_padded(right_batch["attention_mask"])  # the case under test
    given = {key: value.clone() for key, value in right_batch.items()}
    runs = []
    for batch in (left(CONTEXTS, return_tensors="pt", padding=True), right_batch):
        torch.manual_seed(5)
        runs.append(
            diversity_threshold_generate(
                model,
                right,
                batch,
                metric=NLIContradictions(RuleScorer()),
                threshold=10.0,
                num_responses=3,
                max_samples=4,
                **GENERATE,
            )
        )
    assert any(result.num_resampled for result in runs[0])
    assert [r.to_dict() for r in runs[1]] == [r.to_dict() for r in runs[0]]
    # the caller's batch is untouched
    assert all(torch.equal(given[key], right_batch[key]) for key in given)
    assert "right-padding was detected" not in capfd.readouterr().err


def test_the_custom_generate_recipe_gives_a_right_padded_batch_the_left_padded_sequences(
    causal, capfd
):
    from conftest import REPO_ROOT

    model, left, right = causal
    outputs = []
    for tokenizer in (left, right):
        batch = tokenizer(CONTEXTS, return_tensors="pt", padding=True)
        torch.manual_seed(8)
        outputs.append(
            model.generate(
                **batch,
                custom_generate=str(REPO_ROOT / "generation"),
                trust_remote_code=True,
                tokenizer=tokenizer,
                metric=NLIContradictions(RuleScorer()),
                threshold=10.0,
                num_return_sequences=3,
                max_samples=4,
                return_dict_in_generate=True,
                **GENERATE,
            )
        )
    assert torch.equal(outputs[1].sequences, outputs[0].sequences)
    width = left(CONTEXTS, return_tensors="pt", padding=True)["input_ids"].shape[1]
    assert torch.equal(
        outputs[1].sequences[:, :width],
        left(CONTEXTS, return_tensors="pt", padding=True)["input_ids"].repeat_interleave(3, dim=0),
    )
    assert "right-padding was detected" not in capfd.readouterr().err
