"""Configuration of the ``str_replace_editor`` tool (validated once, when the tool is built)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from vfs.errors import InvalidArgument

DEFAULT_MAX_OUTPUT_CHARS = 16000

UNDO_DESCRIPTION = (
    "\n\nUsing `undo_edit`:\n"
    "* `undo_edit` reverts the last change made to the file at `path` (only if nobody changed it since)."
)


class ConfigError(InvalidArgument):
    """The tool's configuration is invalid (raised when the tool is built, never during a call)."""


@cache
def default_description() -> str:
    """The default tool description (``description.md``, shipped with the package)."""
    text = resources.files(__package__).joinpath("description.md").read_text(encoding="utf-8")
    return text.strip()


class EditorConfig(BaseModel):
    """``max_output_chars`` (positive integer), ``description`` (non-empty), ``enable_undo``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_output_chars: StrictInt = Field(default=DEFAULT_MAX_OUTPUT_CHARS, gt=0)
    description: StrictStr | None = None
    enable_undo: StrictBool = False

    @property
    def tool_description(self) -> str:
        """The description the model sees (the default one mentions ``undo_edit`` when it is on)."""
        if self.description is not None:
            return self.description
        return default_description() + (UNDO_DESCRIPTION if self.enable_undo else "")


def make_config(config: EditorConfig | dict[str, Any] | None = None, **overrides: Any) -> EditorConfig:
    """Build and check a config from a model, a mapping, or keyword overrides; :class:`ConfigError` if invalid."""
    if isinstance(config, EditorConfig) and not overrides:
        return config
    values: dict[str, Any] = {}
    if isinstance(config, EditorConfig):
        values.update(config.model_dump(exclude_unset=True))
    elif config is not None:
        if not isinstance(config, dict):
            raise ConfigError(f"str_replace_editor: config must be a mapping, got {type(config).__name__}")
        values.update(config)
    values.update(overrides)
    try:
        built = EditorConfig.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ())) or "config"
        if field == "max_output_chars":
            message = (
                f"str_replace_editor: max_output_chars must be a positive integer, "
                f"got {values.get('max_output_chars')!r}"
            )
        elif field == "description":
            message = "str_replace_editor: description must be a non-empty string"
        else:
            message = f"str_replace_editor: invalid config `{field}`: {first.get('msg')}"
        raise ConfigError(message) from None
    if built.description is not None and not built.description.strip():
        raise ConfigError("str_replace_editor: description must be a non-empty string")
    return built
