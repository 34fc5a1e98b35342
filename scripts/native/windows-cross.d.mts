// Types of the part of windows-cross.mjs (plain JavaScript: it runs while npm installs) that the tests use.
export function wineBinary(): string | undefined;
