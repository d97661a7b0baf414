import pytest
import torch

from model.retrieval import recall_at_k, retrieval_loss


def test_recall_at_k_counts_duplicate_captions():
    S = torch.tensor([[0.1, 0.9, 0.0],    # image 0 prefers caption 1, same text as caption 0
                      [0.0, 0.2, 0.9],    # image 1 prefers caption 2: a miss at R@1
                      [0.0, 0.1, 0.9]])
    r = recall_at_k(S, ["a dog", "a dog", "a cat"], ks=(1, 2))
    assert r["i2t_R@1"] == pytest.approx(2 / 3) and r["i2t_R@2"] == 1.0
    # captions: 0 -> best image 0 (dog) ok; 1 -> image 0 (dog) ok; 2 -> image 1 (dog): miss
    assert r["t2i_R@1"] == pytest.approx(2 / 3)


def test_three_losses():
    good = torch.tensor([[5.0, -5.0, -5.0]])
    bad = torch.tensor([[-5.0, 5.0, -5.0]])
    for kind in ("bce", "ce", "triplet"):
        assert retrieval_loss(good, kind) < retrieval_loss(bad, kind)
    assert retrieval_loss(good, "triplet") == 0.0  # margin met against the hardest negative
    s = torch.tensor([[1.0, 0.5, 0.9]], requires_grad=True)
    retrieval_loss(s, "triplet").backward()
    assert s.grad[0, 1] == 0 and s.grad[0, 2] > 0  # only the hardest negative gets a gradient
