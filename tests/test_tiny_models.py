"""The tiny checkpoints must behave like real ones, or every test built on them proves nothing."""

import pytest
import tiny_models
import torch
from safetensors.torch import load_file
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    AutoTokenizer,
)

MODEL_FIXTURES = {
    "tiny_gpt2_path": (AutoModelForCausalLM, "GPT2LMHeadModel", tiny_models.save_tiny_gpt2),
    "tiny_bart_path": (
        AutoModelForSeq2SeqLM,
        "BartForConditionalGeneration",
        tiny_models.save_tiny_bart,
    ),
    "tiny_roberta_nli_path": (
        AutoModelForSequenceClassification,
        "RobertaForSequenceClassification",
        tiny_models.save_tiny_roberta_nli,
    ),
}
PAIRS = [
    ("a man is playing a guitar on the stage.", "nobody is playing music right now."),
    ("hi", "hello there"),
]
UNICODE_TEXTS = ["héllo 👋", "how are you doing today?", "naïve café — 東京\n\tok"]


@pytest.mark.parametrize("text", UNICODE_TEXTS)
def test_tokenizer_round_trips_arbitrary_unicode(tiny_tokenizer_path, text):
    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_path)
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.unk_token_id not in ids
    assert tokenizer.decode(ids) == text


def test_tokenizer_is_small_with_roberta_style_specials(tiny_tokenizer_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_path)
    assert 300 <= len(tokenizer) <= 500
    specials = [tokenizer.convert_ids_to_tokens(i) for i in range(4)]
    assert specials == ["<s>", "<pad>", "</s>", "<unk>"]
    assert tokenizer.mask_token == "<mask>"
    # Trained merges, not just the byte alphabet: common words are single tokens.
    assert tokenizer.tokenize(" you and the") == ["Ġyou", "Ġand", "Ġthe"]


@pytest.mark.parametrize("fixture", list(MODEL_FIXTURES))
def test_auto_classes_load_each_dir(request, fixture):
    path = request.getfixturevalue(fixture)
    auto_class, class_name, _ = MODEL_FIXTURES[fixture]
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = auto_class.from_pretrained(path)
    assert type(model).__name__ == class_name
    assert model.config.vocab_size == len(tokenizer)
    assert model.config.pad_token_id == tokenizer.pad_token_id
    assert model.config.eos_token_id == tokenizer.eos_token_id


def test_gpt2_samples_new_tokens_for_left_padded_batch(tiny_gpt2_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path)
    assert tokenizer.padding_side == "left"
    batch = tokenizer(["hi", "how are you doing today?"], return_tensors="pt", padding=True)
    assert batch["attention_mask"][0, 0] == 0 and batch["attention_mask"][0, -1] == 1
    assert tokenizer.eos_token_id not in batch["input_ids"][1]  # GPT-2 prompts stay open-ended

    def sample():
        torch.manual_seed(0)
        return model.generate(**batch, do_sample=True, max_new_tokens=6, min_new_tokens=6)

    out = sample()
    prompt_length = batch["input_ids"].shape[1]
    assert out.shape == (2, prompt_length + 6)
    assert torch.equal(out[:, :prompt_length], batch["input_ids"])
    assert torch.equal(out, sample())


def test_bart_generates_from_decoder_start(tiny_bart_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path)
    prompts = ["hi there", "what is your favourite book?"]
    batch = tokenizer(prompts, return_tensors="pt", padding=True)
    out = model.generate(**batch, max_new_tokens=8)
    assert out.shape[0] == 2 and 1 < out.shape[1] <= 9
    assert (out[:, 0] == model.config.decoder_start_token_id).all()


def test_nli_labels_and_padded_pair_forward(tiny_roberta_nli_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_roberta_nli_path)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_roberta_nli_path).eval()
    assert model.config.id2label == {0: "contradiction", 1: "neutral", 2: "entailment"}
    assert model.config.label2id == {"contradiction": 0, "neutral": 1, "entailment": 2}

    premises, hypotheses = zip(*PAIRS)
    batch = tokenizer(list(premises), list(hypotheses), return_tensors="pt", padding=True)
    assert (batch["attention_mask"] == 0).any()
    with torch.no_grad():
        logits = model(**batch).logits
        alone = model(**tokenizer(*PAIRS[1], return_tensors="pt")).logits
    assert logits.shape == (2, 3)
    # Padding must not leak in (pad id and position offset agree), and outputs depend on input.
    torch.testing.assert_close(logits[1:], alone, atol=1e-5, rtol=1e-4)
    assert not torch.allclose(logits[0], logits[1], atol=1e-3)


def test_nli_accepts_full_length_input(tiny_roberta_nli_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_roberta_nli_path)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_roberta_nli_path)
    long = " ".join(tiny_models.CORPUS)
    batch = tokenizer(long, long, truncation=True, return_tensors="pt")
    assert batch["input_ids"].shape[1] == tiny_models.MAX_LENGTH
    with torch.no_grad():
        assert model(**batch).logits.shape == (1, 3)


@pytest.mark.parametrize("fixture", list(MODEL_FIXTURES))
def test_rebuilding_gives_identical_weights_and_leaves_rng_alone(
    request, tmp_path, tiny_tokenizer_path, fixture
):
    path = request.getfixturevalue(fixture)
    build = MODEL_FIXTURES[fixture][2]
    torch.manual_seed(1234)
    expected_draw = torch.rand(3)
    torch.manual_seed(1234)
    rebuilt = build(tmp_path / "again", tiny_tokenizer_path)
    assert torch.equal(torch.rand(3), expected_draw)

    first = load_file(f"{path}/model.safetensors")
    second = load_file(f"{rebuilt}/model.safetensors")
    assert first.keys() == second.keys()
    for name in first:
        assert torch.equal(first[name], second[name]), name


def test_retraining_the_tokenizer_is_deterministic(tmp_path, tiny_tokenizer_path):
    again = tiny_models.save_tiny_tokenizer(tmp_path / "again")
    first = AutoTokenizer.from_pretrained(tiny_tokenizer_path)
    second = AutoTokenizer.from_pretrained(again)
    assert first.get_vocab() == second.get_vocab()
