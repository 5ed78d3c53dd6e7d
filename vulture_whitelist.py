"""Names `make lint-dead-code` (vulture) must not report: code that is used, but not by a call
vulture can see in the package, the examples or the benchmarks.

Each group says why its names are live. Anything else vulture reports is dead: delete it, or use
it. A public function that only the tests call is dead too (the tests are not scanned): give it a
user in the package, or list it here with the reason it is public.
"""

# ruff: noqa: B018 (each line names what is used: the file is expressions by design)
from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# Host hooks: the host library calls them by name.
_._info  # evaluate.Metric / datasets.DatasetBuilder
_._split_generators  # datasets.DatasetBuilder
_._generate_examples  # datasets.DatasetBuilder
_.BUILDER_CONFIG_CLASS  # datasets.DatasetBuilder
_._get_num_items_in_batch  # transformers.Trainer overrides (trainers/_base.py)
_.compute_loss
_.create_model_card
_.loss_is_scaled_for_ga  # read by transformers.Trainer
# transformers.TrainerCallback hooks (trainers/dress.py, benchmarks/bench_dress.py)
_.on_train_begin
_.on_epoch_begin
_.on_step_begin
_.on_step_end
_.control  # a TrainerCallback hook's parameter, unused by ours
_.exc_info  # a context manager's __exit__ parameter
_.skip_special_tokens  # the parameters of a tokenizer stand-in's decode / encode (benchmarks)
_.show_progress_bar

# Attributes the host libraries read after we set them.
_.__module__  # a composed dataclass's module (dialeval/cli/evaluate_job.py)
_.padding_side  # tokenizers
_.truncation_side
_.pre_tokenizer  # tokenizers.Tokenizer of the tiny models built in code (examples, benchmarks)
_.post_processor
_.sent_encode  # bert_score's module function, patched in the peers' benchmark
_.do_sample  # transformers.GenerationConfig
_.writeable  # numpy array flags
_.buf_writer  # evaluate.Metric's writer state, reset by metrics/engines/evaluate_module.py

# Fields of public result and settings dataclasses: what a user reads or sets.
_.initial_diversity  # generation/dtg.py: DTGResult
_.utterance_overlap
_.initial_scores
_.response_scores
_.response_logits
_.dtg_results  # generation/dtg_outputs.py: the generate() outputs with DTG's results
_.sum_log_probs  # generation/group_beam_search.py: a finished beam
_.num_unique_pairs  # metrics/engines/pair_scorer.py: PairScoringStats
_.num_encoded  # metrics/similarity_diversity/bertscore.py: BERTScoreMatrices
_.context_index  # trainers/frequent_negatives.py: FrequentNegative
_.contexts_from  # dialeval/cli/dtg_options.py: DTGOptions
_.top_k  # dialeval/cli/dtg_options.py: DTGOptions, read by name (SAMPLING_OPTIONS)
_.dailydialog_file  # datasets_scripts/response_selection: the builder config's data files
_.opensubtitles_file
_.repository_file
_.exclude_file

# Public API documented in the README and the cards, and names kept for compatibility.
_.clear_model_cache  # dialeval.hub: drop every cached model
_.input_scope  # dialeval.io: the README's input reader
_.read_response_sets
_.leave_one_out_scores  # nli_diversity's NLIPairMatrix (its card)
# metrics/registry.py: each metric's public functions (checked by tests/metrics/test_registry.py)
_.functions
# metrics/registry.py: the Hub name a user loads (the doctest harness maps it to the folder)
_.hub_name
_.set_scorer  # metrics/registry.py: the per-set figure by its `meta-eval --metric` name

# Dead, in a file another change is editing: the merger deletes both lines (its and this one).

# Used where vulture cannot see it.
_.calibrate_threshold  # generation/dtg_thresholds.py: public, documented in generation/README.md
_.GENERATION_PRIVATE_METHODS  # the host adapters' lists of the hosts' private names, which
_.QUEUE_ATTRIBUTES  # tests/root/test_host_adapters.py checks against the installed hosts
_.OVERRIDDEN_PRIVATE_METHODS
_.READ_PRIVATE_NAMES

# The keyword parameters of dialeval.type_aliases.SentenceEncoder.encode, a Protocol's signature
# (SentenceTransformer.encode matches it); the engines pass them by keyword.
_.convert_to_numpy
_.normalize_embeddings

# Python reads a module's __class__ on every attribute set: lazy_exports gives a package the class
# that keeps its exported names from being shadowed by same-named submodules.
_.__class__

# bench_gpu's stand-in for matplotlib: bert_score imports this name at module level
_.make_axes_locatable

# ONNX Runtime's SessionOptions fields, read by the session it is passed to (graph_runners)
_.intra_op_num_threads
_.inter_op_num_threads
