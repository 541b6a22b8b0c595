"""The floor diagnosis (benchmarks/teacher_dip/floor_batches.py): its per-row pushes add up to the lab loss's
floor, its batches (``benchmarks/negation_fit/rows.py``'s) are the trainer's, and its dropout and windows do what
they say."""

from __future__ import annotations

import pytest
import torch

from benchmarks.negation_fit.rows import training_batches
from benchmarks.negation_teacher.distill_margin import TeacherDistillMarginLoss
from benchmarks.teacher_dip.floor_batches import (
    WORD_CUES,
    cue_summary,
    main,
    margin,
    row_pushes,
    student_embeddings,
    summarise,
    word_cue,
)
from tests.reference import cosine


def test_row_pushes_add_up_to_the_weighted_floor_of_the_loss() -> None:
    generator = torch.Generator().manual_seed(5)
    columns = [torch.randn(6, 8, generator=generator, dtype=torch.float64) for _ in range(4)]
    teacher = torch.randn(18, 12, generator=generator, dtype=torch.float64)
    weights = torch.tensor([1.0, 0.3, 2.0, 1.0, 0.3, 2.0], dtype=torch.float64)
    loss = TeacherDistillMarginLoss(None, teacher_weight=0.1, distill="margin_floor",
                                    group_weights={"negation_edit": 0.3, "other": 2.0})
    term = loss.compute_loss_from_embeddings(columns, teacher=teacher, rows=torch.ones(6, dtype=torch.bool),
                                             row_weights=weights)["teacher"]
    pushes = row_pushes(margin(teacher.chunk(3)), margin(columns[:3]), weights, batch_rows=6, teacher_weight=0.1)
    assert pushes.shape == (6,)
    assert (pushes >= 0).all() and (pushes > 0).any(), "random teachers disagree on some rows"
    assert pushes.sum().item() == pytest.approx(term.item(), rel=1e-12)
    s = [c.tolist() for c in columns[:3]]
    t = [c.tolist() for c in teacher.chunk(3)]

    def row_margin(x: list[list[list[float]]], i: int) -> float:
        return cosine(x[0][i], x[1][i]) - cosine(x[0][i], x[2][i])

    for i in range(6):
        expected = 0.1 * float(weights[i]) * max(0.0, row_margin(t, i) - row_margin(s, i)) ** 2 / 6
        assert pushes[i].item() == pytest.approx(expected, rel=1e-9, abs=1e-15)
    capped = row_pushes(margin(teacher.chunk(3)), margin(columns[:3]), weights, batch_rows=6, teacher_weight=0.1,
                        hinge_cap=0.05)
    capped_loss = TeacherDistillMarginLoss(None, teacher_weight=0.1, distill="margin_floor", hinge_cap=0.05,
                                           group_weights={"negation_edit": 0.3, "other": 2.0})
    assert capped.sum().item() == pytest.approx(capped_loss.compute_loss_from_embeddings(
        columns, teacher=teacher, rows=torch.ones(6, dtype=torch.bool), row_weights=weights)["teacher"].item(), rel=1e-12)
    assert capped.sum().item() < pushes.sum().item()


def test_batches_are_the_trainers_own(tiny_model, wiki_sentences, tmp_path) -> None:
    """The no-duplicates sampler the trainer builds for st_debias's own training arguments, on rows of real
    sentences."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from st_debias.recipes import load_recipe, override
    from st_debias.recipes.train import _training_arguments

    texts = wiki_sentences[:90]
    # Repeated anchors: the sampler must skip a row whose text is already in the batch, as in training.
    rows = Dataset.from_dict({"anchor": texts[:30] + texts[:10], "positive": texts[30:60] + texts[50:60],
                              "negative": texts[60:90] + texts[80:90]})
    recipe = override(load_recipe("simcse"), steps=20, batch_size=8, seed=7)
    args = _training_arguments(recipe.training, tmp_path, show_progress_bar=False)
    args.eval_strategy = "no"  # no evaluator here; the sampler does not depend on it
    trainer = SentenceTransformerTrainer(model=tiny_model, args=args, train_dataset=rows,
                                         loss=MultipleNegativesRankingLoss(tiny_model))
    expected = list(trainer.get_train_dataloader().batch_sampler)
    batches = training_batches(rows, batch_size=8, seed=7)
    assert batches == expected
    longer = training_batches(rows, batch_size=8, seed=7, steps=len(expected) + 3)
    assert longer[:len(expected)] == expected and len(longer) == len(expected) + 3
    sampler = trainer.get_train_dataloader().batch_sampler
    sampler.set_epoch(1)
    assert longer[len(expected):] == list(sampler)[:3], "the next epoch is the trainer's next epoch"
    assert batches == training_batches(rows, batch_size=8, seed=7)
    assert batches != training_batches(rows, batch_size=8, seed=8)
    for batch in batches:
        assert len(batch) == 8
        batch_texts = [rows[i][c] for i in batch for c in ("anchor", "positive", "negative")]
        assert len(set(batch_texts)) == len(batch_texts)


def test_student_embeddings_with_dropout_are_seeded_and_leave_the_model_in_eval(tiny_model, wiki_sentences) -> None:
    rows = [(wiki_sentences[i], wiki_sentences[i], wiki_sentences[i + 1]) for i in range(0, 12, 2)]
    tiny_model.eval()
    clean = student_embeddings(tiny_model, rows)
    dropped = student_embeddings(tiny_model, rows, dropout=True, seed=3)
    assert not tiny_model.training
    assert torch.allclose(clean[0], clean[1]), "an identical positive embeds as its anchor without dropout"
    assert not torch.allclose(dropped[0], dropped[1]), "each column draws its own dropout masks"
    assert torch.equal(torch.cat(dropped), torch.cat(student_embeddings(tiny_model, rows, dropout=True, seed=3)))
    assert (margin(clean) == margin(dropped)).sum() == 0
    assert (torch.nn.functional.cosine_similarity(dropped[0], dropped[1]) < 1 - 1e-4).all(), "s(a, a) < 1 with dropout"
    for module in tiny_model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    assert torch.allclose(torch.cat(student_embeddings(tiny_model, rows, dropout=True)), torch.cat(clean), atol=1e-5)


def test_summarise_counts_rows_and_push_per_step_by_window() -> None:
    def record(step: int, group: str, identical: bool, push: float, teacher: float = 0.2, student: float = 0.1):
        return {"step": step, "group": group, "identical": identical, "push": push, "teacher_margin": teacher,
                "student_margin": student, "dropout_margin": student - 0.01}

    records = [record(51, "meaning", False, 0.2, 0.4, 0.0), record(52, "meaning", False, 0.0, 0.0, 0.2),
               record(52, "other", True, 0.4), record(76, "other", True, 0.1)]
    out = summarise(records, range(51, 81), ("meaning", "other"))
    assert list(out) == ["51-75", "76-80"]
    assert out["51-75"]["meaning, paraphrase"] == {"rows": 2, "pushed": 1, "push_per_step": pytest.approx(0.1),
                                                   "teacher_margin": pytest.approx(0.2),
                                                   "student_margin": pytest.approx(0.1),
                                                   "dropout_margin": pytest.approx(0.09)}
    assert out["51-75"]["other, identical"]["rows"] == 1
    assert out["51-75"]["other, identical"]["push_per_step"] == pytest.approx(0.2)
    assert out["76-80"]["other, identical"]["push_per_step"] == pytest.approx(0.1)
    assert out["76-80"]["meaning, paraphrase"] == {"rows": 0, "pushed": 0, "push_per_step": 0.0,
                                                   "teacher_margin": None, "student_margin": None,
                                                   "dropout_margin": None}


FLOOR = "benchmarks/negation_teacher/configs/v6-halfpairs-marginfloor-negedit03-other2-negviews05-lr15e6.yaml"
START = "a=sentence-transformers/all-MiniLM-L6-v2"


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.yaml", START, "--out", "x.md"], "config: no file"),
    ([__file__, START, "--out", "x.md"], "is not a recipe"),
    (["benchmarks/negation_teacher/configs/v6-halfpairs.yaml", START, "--out", "x.md"], "no TeacherDistillMarginLoss"),
    (["benchmarks/negation_teacher/configs/v6-halfpairs-marginfloor-negation.yaml", START, "--out", "x.md"],
     "restricts the floor's rows"),
    ([FLOOR, START, "--first", "90", "--last", "60", "--out", "x.md"], "--first/--last"),
    ([FLOOR, "sentence-transformers/all-MiniLM-L6-v2", "--out", "x.md"], "must be label=folder"),
    ([FLOOR, "a=no/such/folder", "--out", "x.md"], "no model folder at no/such/folder"),
])
def test_bad_arguments_exit_2_naming_them(argv, message, capsys, tmp_path) -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    argv = [str(root / a) if a.startswith("benchmarks/") else a for a in argv]
    argv[argv.index("--out") + 1] = str(tmp_path / "x.md")
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()


def test_word_cue_names_the_candidate_fewer_word_edits_from_the_anchor() -> None:
    meaning = ("the water is not cold .", "the water is hot .", "the water is not hot .")
    assert word_cue(*meaning) == "negative fewer word edits", "one word swapped against two words changed"
    voice = ("the cat chased the dog .", "the dog was chased by the cat .", "the dog chased the cat .")
    assert word_cue(*voice) == "negative fewer word edits", "a swap keeps every word but moves two"
    synonym = ("the film was big .", "the film was large .", "the film was small .")
    assert word_cue(*synonym) == "as many"
    identical = ("the film was big .", "the film was big .", "the film was not big .")
    assert word_cue(*identical) == "positive fewer word edits"


def test_cue_summary_counts_rows_and_push_per_step_by_window_and_cue() -> None:
    records = [{"step": 51, "cue": WORD_CUES[0], "push": 0.3}, {"step": 52, "cue": WORD_CUES[0], "push": 0.1},
               {"step": 52, "cue": WORD_CUES[2], "push": 0.2}, {"step": 76, "cue": WORD_CUES[1], "push": 0.4}]
    out = cue_summary(records, range(51, 81))
    assert list(out) == ["51-75", "76-80"]
    assert out["51-75"][WORD_CUES[0]] == {"rows_per_step": 1.0, "push_per_step": pytest.approx(0.2)}
    assert out["51-75"][WORD_CUES[2]] == {"rows_per_step": 0.5, "push_per_step": pytest.approx(0.1)}
    assert out["51-75"][WORD_CUES[1]] == {"rows_per_step": 0.0, "push_per_step": 0.0}
    assert out["76-80"][WORD_CUES[1]] == {"rows_per_step": 1.0, "push_per_step": pytest.approx(0.4)}
