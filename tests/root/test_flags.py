"""Boolean options take True or False: a string such as "no" was read by its truth value (True)."""

import numpy as np
import pytest

from dialeval.validation import check_flag, check_response_sets


def test_check_flag_accepts_bools_only():
    assert check_flag(True, "x") is True and check_flag(np.bool_(False), "x") is False
    for bad in ("no", "False", 1, 0, None, 1.0):
        with pytest.raises(ValueError, match="`allow_empty` must be True or False"):
            check_flag(bad, "allow_empty")


def test_allow_empty_must_be_a_bool_everywhere():
    from dialeval.metrics import distinct_n, ngram_cosine_diversity

    with pytest.raises(ValueError, match="`allow_empty` must be True or False"):
        check_response_sets([["a", ""]], allow_empty="no")
    with pytest.raises(ValueError, match="`allow_empty` must be True or False"):
        distinct_n(["a b", ""], allow_empty="no")
    with pytest.raises(ValueError, match="`allow_empty` must be True or False"):
        ngram_cosine_diversity(["a b", "c"], allow_empty=1)


def test_metric_flags_are_checked_before_any_model_loads():
    from dialeval.generation import diverse_beam_search_nbest
    from dialeval.metrics import diversity_meta_evaluation, nli_diversity, self_bleu
    from dialeval.metrics.engines.lm_scorer import CandidateScorer

    with pytest.raises(ValueError, match="`return_matrices` must be True or False"):
        nli_diversity([["a b", "c d"]], model="not/loaded", return_matrices="no")
    with pytest.raises(ValueError, match="`progress` must be a callable"):
        nli_diversity([["a b", "c d"]], model="not/loaded", progress=3)
    with pytest.raises(ValueError, match="`return_per_response` must be True or False"):
        self_bleu(["a b", "c d"], return_per_response="yes")
    with pytest.raises(ValueError, match="`bootstrap` must be True or False"):
        diversity_meta_evaluation([0.1, 0.5, 0.9], [0, 0.5, 1], bootstrap="no")
    with pytest.raises(ValueError, match="`candidate_eos` must be True or False"):
        CandidateScorer("not/loaded", candidate_eos="no")
    with pytest.raises(ValueError, match="`share_context` must be True or False"):
        CandidateScorer("not/loaded", share_context=0)
    with pytest.raises(ValueError, match="`return_hypotheses` must be True or False"):
        diverse_beam_search_nbest(None, None, ["hi"], return_hypotheses="no")
