"""`make test-fast`: the suite less its heaviest tests, for a quick check while working.

`make test-fast` runs ``pytest -m "not slow and not heavy"``; tests/conftest.py marks ``heavy``
the tests listed here. `make test` runs them all, and stays the check before a commit.

The list: every test that took 8 s or more (setup included) in one ``pytest --durations=0`` run
of the whole suite, less what a test module needs to keep a test in the quick run (the two
multi-process modules tests/trainers/test_dress_ddp.py and
tests/metrics/test_selection_sem_ent_processes.py keep one launch each). The seconds beside each
are from that run, made while other test runs shared the 2 cores (the whole suite took 2,689 s
there; 218 s idle, where `make test-fast` took 92 s; later, idle, 255 s and 125 s): ranks under
the load this machine usually has, where multithreaded tests suffer most, not timings. A run of `make test-fast` checks that
every listed test still exists and that every test module keeps a test outside the list (a
usage error names the entry to fix); a new test of 8 s or more belongs here.
"""

from __future__ import annotations

import pytest

HEAVY_TESTS = {
    "tests/cli/test_cli_report.py": [
        "test_each_sentence_model_encodes_once_behind_one_bar",  # 9 s (as its predecessor)
    ],
    "tests/cli/test_dtg_cli.py": [
        "test_a_killed_run_resumes_without_losing_or_repeating_a_context",  # 32 s
        "test_dtg_cli_writes_every_context_in_order_with_a_table4_summary",  # 17 s
        "test_trials_repeat_the_run_with_their_own_seeds_and_resume_across_trials",  # 36 s
        "test_two_accelerate_processes_give_the_one_process_file",  # 29 s
    ],
    "tests/cli/test_evaluate_processes.py": [
        "test_two_accelerate_processes_write_the_one_process_report",  # 52 s
    ],
    "tests/cli/test_meta_eval_cli.py": [
        "test_model_based_metrics_score_every_set",  # 73 s
    ],
    "tests/examples/test_reproduce_han.py": [
        "test_table1_correlations_are_the_librarys",  # 9 s
        "test_tables3_5_paper_scale_fine_tunes_a_pretrained_seq2seq_model[bart]",  # 173 s
        "test_tables3_5_paper_scale_fine_tunes_a_pretrained_seq2seq_model[blenderbot_small]",  # 677 s
        "test_tables3_5_print_a_row_per_method_and_config",  # 46 s
        "test_tables3_methods_picks_rows_and_refuses_unbuilt_ones",  # 12 s
        "test_tables3_5_default_to_the_papers_dailydialog_when_it_is_here",  # 11 s
        "test_tables3_5_fall_back_to_dailydialog_pp_and_say_so",  # 9 s
    ],
    "tests/generation/test_dtg.py": [
        "test_cached_scorer_equals_the_naive_procedure[10.0]",  # 23 s
        "test_cached_scorer_equals_the_naive_procedure[4.0]",  # 10 s
        "test_run_dtg_seeds_each_batch_so_a_resumed_run_equals_the_whole",  # 9 s
        "test_ties_do_not_replace_slot_0_again_and_again",  # 30 s
    ],
    "tests/generation/test_dtg_custom_generate.py": [
        "test_callers_tokenizer_and_generation_configs_are_left_as_they_were[seq2seq]",  # 12 s
        "test_sequences_are_generates_own_when_no_response_is_replaced[seq2seq]",  # 8 s
        "test_sequences_hold_the_final_sets_after_resampling[seq2seq]",  # 25 s
    ],
    "tests/metrics/test_memory_cap.py": [
        "test_100k_character_inputs_stay_under_one_gib[nli]",  # 43 s
    ],
    "tests/metrics/test_module_conformance.py": [
        "test_bad_batch_names_the_argument_and_nothing_stays_queued[sem_ent]",  # 32 s
        "test_bad_batch_names_the_argument_and_nothing_stays_queued[similarity_diversity]",  # 14 s
        "test_bad_batch_names_the_argument_and_nothing_stays_queued[vendi_score]",  # 14 s
        "test_combine_of_the_modules_without_required_options",  # 19 s
        "test_compute_equals_add_batch_in_chunks_equals_add_one_by_one[sem_ent]",  # 30 s
        "test_compute_equals_add_batch_in_chunks_equals_add_one_by_one[vendi_score]",  # 11 s
        "test_distributed_mode_gives_process_0_the_one_process_result",  # 43 s
        "test_options_are_explicit_and_an_unknown_one_is_a_type_error[sem_ent]",  # 11 s
        "test_refused_inputs_are_found_on_the_gathered_inputs_and_discarded[sem_ent]",  # 9 s
        "test_arrays_and_tensors_are_accepted_as_evaluate_accepts_them[sem_ent]",  # 10 s
    ],
    "tests/metrics/test_nli.py": [
        "test_batched_engine_equals_one_pair_per_forward",  # 10 s
        "test_scores_do_not_depend_on_batch_size",  # 13 s
    ],
    "tests/metrics/test_registry.py": [
        "test_every_public_name_is_importable_from_a_fresh_interpreter",  # 10 s
    ],
    "tests/metrics/test_response_selection_metric.py": [
        "test_batched_losses_equal_one_forward_per_candidate[tiny_bart_path]",  # 10 s
        "test_batched_losses_equal_one_forward_per_candidate[tiny_gpt2_path]",  # 12 s
        "test_turn_separator_and_long_contexts",  # 8 s
    ],
    "tests/metrics/test_response_selection_models.py": [
        "test_every_seq2seq_family_is_scored_as_its_forward_does[bart]",  # 11 s
        "test_every_seq2seq_family_is_scored_as_its_forward_does[blenderbot]",  # 13 s
        "test_every_seq2seq_family_is_scored_as_its_forward_does[t5]",  # 14 s
        "test_sliding_window_model_is_scored_with_its_window",  # 12 s
    ],
    "tests/metrics/test_sem_ent_module.py": [
        "test_dialeval_evaluate_adds_sem_ent_and_its_plot",  # 34 s
        "test_module_equals_the_functional_core",  # 26 s
        "test_only_the_main_process_saves_clusters_under_split_work",  # 9 s
        "test_topics_become_clusters_and_one_topic_scores_zero",  # 18 s
    ],
    "tests/metrics/test_set_lexical.py": [
        "test_matches_released_scores_on_all_18_files[per_set]",  # 41 s
    ],
    "tests/metrics/test_set_lexical_repeats.py": [
        "test_dailydialog_plusplus_sets_as_before",  # 12 s
    ],
    "tests/root/test_argument_names_models.py": [
        # 11 s: fits Sem-Ent's clusters for each hostile value
        "test_an_evaluate_error_about_a_model_flag_names_the_flag[--save-sem-ent-clusters]",
    ],
    "tests/root/test_runtimes.py": [
        # 19 s together, the embedded MiniLM's export (its module fixture) included
        "test_sentence_transformers_encode_equals_torch[onnx]",
        "test_sentence_transformers_encode_equals_torch[openvino]",
    ],
    "tests/root/test_split_work.py": [
        "test_two_processes_equal_one",  # 42 s
    ],
    "tests/root/test_text.py": [
        "test_equals_nltk_on_dailydialog_pp",  # 12 s
    ],
    "tests/trainers/test_dress_ddp.py": [
        "test_two_processes_match_one[dress]",  # 36 s
    ],
    "tests/trainers/test_dress_negatives.py": [
        "test_negatives_are_spread_over_the_epoch_within_the_bound",  # 10 s
    ],
    "tests/trainers/test_dress_trainer.py": [
        "test_a_resumed_run_trains_as_the_uninterrupted_one[every-epoch]",  # 10 s
        "test_gradient_accumulation_invariance[DRESS]",  # 15 s
        "test_long_contexts_keep_within_the_position_table",  # 20 s
        "test_negative_loss_pushes_generated_responses_down",  # 11 s
        "test_seq2seq_training_negatives_and_predict_with_generate",  # 29 s
    ],
    "tests/trainers/test_trainer_host_contract.py": [
        "test_identical_dress_trials_give_identical_losses",  # 60 s under load (two trials)
    ],
    "tests/trainers/test_trainer_inputs.py": [
        "test_dress_tokenizes_raw_text[bart]",  # 8 s
    ],
    "tests/trainers/test_trainer_matrix.py": [
        "test_evaluate_and_predict[dress-bart-generate-metrics]",  # 15 s
        "test_evaluate_and_predict[unlikelihood-bart-generate-no-metrics]",  # 10 s
        "test_train_eval_steps_best_model_save_and_resume[dress-bart]",  # 34 s
        "test_train_eval_steps_best_model_save_and_resume[dress-gpt2]",  # 13 s
        "test_train_eval_steps_best_model_save_and_resume[unlikelihood-bart]",  # 24 s
        "test_train_eval_steps_best_model_save_and_resume[unlikelihood-gpt2]",  # 10 s
    ],
    "tests/trainers/test_unlikelihood_trainer.py": [
        "test_gradient_accumulation_invariance",  # 8 s
    ],
}
# The DTG page's examples (two DTG runs and an n-best list on tiny models): 13 s idle, 87 s under load.
HEAVY_TESTS["tests/docs/test_docs_examples.py"] = ["test_the_page_examples_run[docs/generation.md]"]

HEAVY_NODE_IDS = frozenset(
    f"{module}::{name}" for module, names in HEAVY_TESTS.items() for name in names
)


def mark_heavy_tests(config, items) -> None:
    """Mark the listed tests ``heavy``; when the run deselects them from the whole suite (`make
    test-fast`), refuse a list entry that names no test or a module left without a test."""
    for item in items:
        if item.nodeid in HEAVY_NODE_IDS:
            item.add_marker(pytest.mark.heavy)
    if (
        "heavy" not in (config.option.markexpr or "")
        or config.args_source is not config.ArgsSource.TESTPATHS
    ):
        return
    collected = {item.nodeid for item in items}
    missing = sorted(HEAVY_NODE_IDS - collected)
    if missing:
        raise pytest.UsageError(
            f"tests/fast_suite.py lists tests that do not exist (renamed or removed?): {missing}"
        )
    modules = {item.nodeid.split("::")[0] for item in items}
    kept = {item.nodeid.split("::")[0] for item in items if item.nodeid not in HEAVY_NODE_IDS}
    if modules - kept:
        raise pytest.UsageError(
            f"tests/fast_suite.py leaves these modules no test in `make test-fast`: {sorted(modules - kept)}"
        )
