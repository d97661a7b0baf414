"""The plain-torch MiniLM gives transformers' BertModel mean-pooled embeddings."""
import numpy as np

from scoring.minilm import MiniLM, model_dir

TEXTS = ["A tabby cat with green eyes", "a cat", "Rocket on its launch pad under a deep blue evening sky", ""]


def test_matches_transformers_bert_on_the_package_files():
    import torch
    from transformers import BertModel, BertTokenizerFast

    ours = MiniLM().encode(TEXTS)
    tok = BertTokenizerFast.from_pretrained(model_dir(), local_files_only=True)
    bert = BertModel.from_pretrained(model_dir(), local_files_only=True).eval()
    enc = tok(TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        h = bert(**enc).last_hidden_state
    m = enc["attention_mask"].unsqueeze(-1).float()
    ref = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1).numpy()
    np.testing.assert_allclose(ours, ref, atol=1e-4)
    sims = ours @ ours.T
    assert sims[0, 1] > sims[0, 2]  # a cat is nearer a tabby cat than a rocket
