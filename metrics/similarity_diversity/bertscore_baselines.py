"""sha256 of the English rescale baselines bert-score 0.3.13 publishes
(``bert_score/rescale_baseline/en/``).

Each file holds, per layer, the P / R / F BERTScore of random English sentence pairs under that
model (columns ``LAYER,P,R,F``);
:func:`~dialeval.metrics.similarity_diversity.bertscore.published_baseline_file` reads one from an
installed bert-score only when its sha256 is the one pinned here.
"""

#: model name as bert-score names it -> sha256 of ``rescale_baseline/en/<name>.tsv``
EN_BASELINE_SHA256 = {
    "albert-base-v1": "0148935ea17512b79b8eb6ab25c2227eba00c195981be140888405de5adf1604",
    "albert-base-v2": "5f4ceb394436dead4aa8454bec32da707811b5f4deedd9e25a0229669b028308",
    "albert-large-v1": "81f651417e70c954cab679f5f6b9c216b04a58e16ab067b3ba85ec39ee4890cf",
    "albert-large-v2": "f5a15268877dad30a9695cbef65f59e50186c92e358ad27a44a7208749aa60fe",
    "albert-xlarge-v1": "084993b33c0fd4ded645368c5842367bc637bb11ad3a771245c2c28e4aca8aec",
    "albert-xlarge-v2": "d935f045bcfe0260815ee7de649bd735ce6fae21452ee7b153eaa744ba3832a2",
    "albert-xxlarge-v1": "72d43d53eb26edf6e813d679a1c8ef128a8189199ef2f15b8c2ede44db3c10b4",
    "albert-xxlarge-v2": "eee1e5b0b367cac55ba3938f003816726a43bfc2bdf259049dae636cf662eac5",
    "bert-base-cased-finetuned-mrpc": (
        "d06775f02f37e553b9c264560c28c5d9b8b4da5afdc2c94bf033e6c5125c91dc"
    ),
    "bert-base-multilingual-cased": (
        "85ace53d552d9ca0f167eede78a32b7dad817f8816fad489449f8c3d66fd4959"
    ),
    "bert-base-uncased": "9539e348c9c52404718828dc2fdc5814d0833bb01bce6d7d90528d263386c5c6",
    "bert-large-uncased": "edbc75b724e57c433af97699e9b3a3904539a1760395f635806d7dad287e0243",
    "distilbert-base-multilingual-cased": (
        "6a9a5bd5bfbf702d5f3a1a5e6c80425bb4ffc7c0037ed0aa2d1e03e2bcabee06"
    ),
    "distilbert-base-uncased-distilled-squad": (
        "55236b52b54bd71862c0f2c2787f8b3ca6c5fc51af20d4abbd49b903b6a0b0a9"
    ),
    "distilbert-base-uncased": "5e04b27ae3fe5e482a796535a7dc0d1db2330779ccd9d92daf1e41aa5758f4c2",
    "distilroberta-base": "208d5b2547bc41a1dbfb110f665c4ce38f0b90f7ce1d5c5fa30a25a4d779e1b4",
    "microsoft/deberta-base-mnli": (
        "000e5659c5732560e86caf39698c771ef608fa5cd5b8706504739cdff0c09bad"
    ),
    "microsoft/deberta-base": "03109f47e39f67f2a81cb68f12d4d36c306121a89c7d792b6906e6eb0b7396f5",
    "microsoft/deberta-large-mnli": (
        "955074fa892d864b34c35f4f85ddb89dcec4ad45289f33f75380b759a54d1f8e"
    ),
    "microsoft/deberta-large": "3313e5a57d22d316ff079e2608b57e87cf4a4a1b218262a5468a5ad3eebf8622",
    "microsoft/deberta-xlarge-mnli": (
        "e9ea1c46dddcf57e19f6e6a57eabcfc38eefa85d4377b39e6b810741be9c2129"
    ),
    "microsoft/deberta-xlarge": "a1553406a658670b5e2596034ac8572cbb2d5cadd468f10f89556b12d3ba82ce",
    "roberta-base": "90a03f2c741848f84c96639715c35c5d61503fae0c3a6339dc57965de34c073e",
    "roberta-large-mnli": "2ef3d727916d82f3b60dd8e7ac2f057b91278409d911254126261bbfd1ec2eb3",
    "roberta-large": "08e2248310d0c25d8e22ef65e0a6be15060269f1a9084e560c258f09a9e122ae",
    "xlm-mlm-100-1280": "eb60598b734a13a695d5fca7c7d583aa8ad04309990ea797df411493182becfd",
    "xlm-mlm-en-2048": "83fbc3f1d8564bf7acdd78492a0e49d27795763b7833e74b57d7a5a5826a811d",
    "xlm-roberta-base": "737e34ff027dea3d11983aa1cbc9aa649e4db8a39ff9718c683fd8102e107b3f",
    "xlm-roberta-large": "4c9a2c559d33f2534557b77d4631f7af214f73b5c2975b7bdb67fd6e73e4a85d",
    "xlnet-base-cased": "53442d0b1320f20486ad40677ee393b011e04f23fe114d2fc4192b7cb95157ce",
    "xlnet-large-cased": "920f4da13716791efe2c0f6bd0a6c43c04d80279fcbed713bdc00776e660aae9",
}
