// Kubernetes' `$(NAME)` expansion, which the kubelet applies to a container's env `value`s, then
// to its `command` and `args`, when it starts the container. `$(NAME)` becomes the variable's
// value when the variable is known, and stays as written when it is not; `$$` becomes `$`; any
// other `$` stays. A value that is data (an output, an item) must reach the container as written,
// so it goes in escaped, and the simulator expands what it reads the way the kubelet would.
import type { Container, EnvVar } from 'kubernetes-types/core/v1.js'

const DOLLAR = '$'
const OPEN = '('
const CLOSE = ')'

/** What a `$(NAME)` reference expands to: the variable's value, or undefined when it is not known. */
export type VariableLookup = (name: string) => string | undefined

/**
 * `value` expanded as the kubelet expands an env value, a command or an argument. Scanned left to
 * right, each expansion's result copied as it is, never expanded again.
 */
export function expand (value: string, lookup: VariableLookup): string {
  let out = ''
  let copiedTo = 0
  for (let at = 0; at < value.length - 1; at++) {
    if (value[at] !== DOLLAR) continue
    out += value.slice(copiedTo, at)
    const next = value[at + 1]
    const close = next === OPEN ? value.indexOf(CLOSE, at + 2) : -1
    if (close >= 0) {
      const name = value.slice(at + 2, close)
      out += lookup(name) ?? `${DOLLAR}${OPEN}${name}${CLOSE}`
      at = close
    } else {
      // `$$` is one `$`; a `$` before anything else (an unclosed `(` too) stays with it.
      out += next === DOLLAR ? DOLLAR : DOLLAR + (next as string)
      at += 1
    }
    copiedTo = at + 1
  }
  return out + value.slice(copiedTo)
}

/**
 * `value` written so that Kubernetes' expansion gives back exactly `value`: every `$` that the
 * expansion would consume (one before `(` or before another `$`) is doubled. Any other `$` is
 * left alone, since the expansion keeps it, so a value without `$(` or `$$` is unchanged.
 */
export function escapeForExpansion (value: string): string {
  return value.replace(/\$(?=[$(])/g, () => DOLLAR + DOLLAR)
}

/** An env var whose container sees `value` byte for byte, whatever `$(` or `$$` it holds. */
export function literalEnvVar (name: string, value: string): EnvVar {
  return { name, value: escapeForExpansion(value) }
}

/**
 * The environment a container starts with, as far as its spec tells: each plain `value` expanded
 * against the variables declared before it, in order. Variables from `valueFrom` or `envFrom`
 * (secrets, config maps, the downward API) and service links are not known here, so a reference to
 * one stays as written.
 */
export function containerEnvironment (container: Pick<Container, 'env'>): Map<string, string> {
  const known = new Map<string, string>()
  for (const variable of container.env ?? []) {
    if (typeof variable.value === 'string' && variable.value !== '') {
      known.set(variable.name, expand(variable.value, name => known.get(name)))
    } else if (variable.valueFrom === undefined) {
      known.set(variable.name, '')
    } else {
      known.delete(variable.name)
    }
  }
  return known
}

/** A container's command and args as it is started: each word expanded against its environment. */
export function expandedCommandLine (
  container: Pick<Container, 'env' | 'command' | 'args'>
): { command: string[], args: string[] } {
  const environment = containerEnvironment(container)
  const lookup: VariableLookup = name => environment.get(name)
  return {
    command: (container.command ?? []).map(word => expand(word, lookup)),
    args: (container.args ?? []).map(word => expand(word, lookup))
  }
}
