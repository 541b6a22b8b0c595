"""Recipe extensions: keys a package adds to a recipe section reach ``load_recipe``, ``override``, the saved recipe
and each hook of a run, through :func:`st_debias.registry.register_recipe_extension`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from transformers import TrainerCallback

from st_debias.recipes import RecipeExtension, load_recipe, override, train_recipe
from st_debias.recipes.extensions import RECIPE_EXTENSIONS
from st_debias.registry import register_recipe_extension

CALLS: list[str] = []


class CountSteps(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
        CALLS.append(f"step {state.global_step}")


class Knob(RecipeExtension):
    section = "training"
    defaults = {"knob": 0, "knob_label": "none"}

    def check(self, recipe: Any) -> None:
        if self.values["knob"] < 0:
            raise ValueError(f"training.knob must be >= 0, got {self.values['knob']!r}.")

    def prepare_model(self, model: Any) -> None:
        CALLS.append(f"prepare {type(model).__name__}")

    def wrap_loss(self, loss: Any, model: Any) -> Any:
        CALLS.append(f"wrap {type(loss).__name__}")
        return loss

    def callbacks(self) -> list[Any]:
        return [CountSteps()] if self.values["knob"] else []


@pytest.fixture
def knob() -> Iterator[None]:
    register_recipe_extension("knob", Knob)
    CALLS.clear()
    yield
    RECIPE_EXTENSIONS.unregister("knob")


def _recipe(tmp_path, training: str) -> Any:
    path = tmp_path / "r.yaml"
    path.write_text(f"name: r\nversion: 1\ndata: {{kind: simcse}}\nloss: {{name: MultipleNegativesRankingLoss}}\n"
                    f"training: {training}\n", encoding="utf-8")
    return path


def test_an_extensions_keys_load_save_and_load_again(knob, tmp_path) -> None:
    recipe = load_recipe(_recipe(tmp_path, "{steps: 3, knob: 2}"))
    assert recipe.extensions == {"knob": {"knob": 2}} and recipe.training.steps == 3
    saved = recipe.to_dict()
    assert saved["training"]["knob"] == 2 and "extensions" not in saved
    again = tmp_path / "saved.yaml"
    again.write_text(yaml.safe_dump(saved), encoding="utf-8")
    assert load_recipe(again).extensions == recipe.extensions


def test_a_recipe_without_an_extensions_keys_never_carries_it(knob) -> None:
    recipe = load_recipe("simcse")
    assert recipe.extensions == {} and "knob" not in recipe.to_dict()["training"]


def test_a_key_nothing_registered_is_refused_naming_the_keys_allowed(knob, tmp_path) -> None:
    with pytest.raises(ValueError, match=r"unknown keys \['knobb'\]; allowed: .*'knob', 'knob_label'"):
        load_recipe(_recipe(tmp_path, "{knobb: 1}"))


def test_the_extension_checks_its_values_naming_the_recipe(knob, tmp_path) -> None:
    path = _recipe(tmp_path, "{knob: -1}")
    with pytest.raises(ValueError, match=f"Recipe {path}: training.knob must be >= 0"):
        load_recipe(path)
    with pytest.raises(ValueError, match=r"simcse \(overridden\): training.knob must be >= 0"):
        override(load_recipe("simcse"), knob=-1)


def test_override_sets_an_extensions_training_key(knob) -> None:
    recipe = override(load_recipe("simcse"), steps=5, knob=1)
    assert recipe.training.steps == 5 and recipe.extensions == {"knob": {"knob": 1}}
    assert override(recipe, knob_label="x").extensions == {"knob": {"knob": 1, "knob_label": "x"}}


def test_each_hook_reaches_the_run(knob, tiny_bert_dir, tmp_path) -> None:
    recipe = override(load_recipe("simcse"), steps=2, batch_size=8, eval_steps=2, max_seq_length=16, knob=1)
    train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False, cache_dir=tmp_path / "cache",
                 show_progress_bar=False, start_as_candidate=False)
    assert CALLS == ["prepare SentenceTransformer", "wrap MultipleNegativesRankingLoss", "step 1", "step 2"]


def test_registration_refuses_what_is_not_an_extension_or_takes_a_key(knob) -> None:
    with pytest.raises(TypeError, match="must be a RecipeExtension subclass"):
        register_recipe_extension("plain", dict)  # type: ignore[arg-type]

    class NoKeys(RecipeExtension):
        section = "training"

    with pytest.raises(TypeError, match="at least one key"):
        register_recipe_extension("no_keys", NoKeys)

    class Elsewhere(RecipeExtension):
        section = "model"
        defaults = {"x": 1}

    with pytest.raises(TypeError, match="must name a section among"):
        register_recipe_extension("elsewhere", Elsewhere)

    class Steps(RecipeExtension):
        section = "training"
        defaults = {"steps": 1}

    with pytest.raises(ValueError, match=r"adds training keys \['steps'\], which are already keys"):
        register_recipe_extension("steps", Steps)
    with pytest.raises(ValueError, match="already registered"):
        register_recipe_extension("knob", Knob)
    with pytest.raises(ValueError, match=r"takes \['knob', 'knob_label'\], not \['other'\]"):
        Knob(other=1)
