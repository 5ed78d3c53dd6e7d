"""dialeval.metrics: pure metric functions (this package) and evaluate modules (sub-folders)."""
from .reduction import diversity_from_similarity_matrix, similarity_to_diversity
from .set_lexical import averaged_distinct_n, ngram_cosine_diversity, ngram_cosine_similarity
from .tokenization import casual_tokenize, tevet_tokenize
