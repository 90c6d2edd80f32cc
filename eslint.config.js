// Lint and format: neostandard (the standard style fastify uses; `eslint --fix` formats), plus the
// project's size limits, and typescript-eslint's type-aware checks on src/ only (where they matter
// and to keep the run short).
import neostandard from 'neostandard'

const noAsAny = {
  selector: 'TSAsExpression > TSAnyKeyword.typeAnnotation, TSTypeAssertion > TSAnyKeyword.typeAnnotation',
  message: 'No `as any` in tests: use a typed helper from test/helpers/ (objects.ts, conditions.ts).'
}

// State belongs to an app, never to a module (docs/architecture.md, "Layers"): no module-level
// `let`/`var`, and no module-level Map a module could fill as a cache. Constant lookup tables
// (a Set or typed array filled once at load) stay allowed.
const atTop = ['Program > VariableDeclaration', 'Program > ExportNamedDeclaration > VariableDeclaration']
const noModuleState = [
  {
    selector: atTop.map(path => `${path}[kind!="const"]`).join(', '),
    message: 'No mutable state at module level: keep it on the app (createFastify) or pass it in.'
  },
  {
    selector: atTop.map(path => `${path} > VariableDeclarator > NewExpression.init[callee.name=/^(Map|WeakMap)$/]`)
      .join(', '),
    message: 'No module-level Map: a cache at module level is shared by every app in the process.'
  }
]

export default [
  ...neostandard({
    ts: true,
    noJsx: true,
    ignores: ['dist/**', '.test-build/**', 'coverage/**', '.tap/**', 'test/fixtures/**']
  }),
  {
    name: 'jobhooks/everywhere',
    rules: {
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2 }],
      // `void promise` marks a promise left unawaited on purpose (typescript-eslint's
      // no-floating-promises reads it so).
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    name: 'jobhooks/src',
    files: ['src/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      // Counted like `wc -l`: blank lines and comments are lines a reader scrolls through too.
      'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false }],
      // An `any` in src/ needs an eslint-disable comment that says why.
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      'no-restricted-syntax': ['error', ...noModuleState]
    }
  },
  {
    name: 'jobhooks/test',
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', noAsAny],
      // Polling loops end when stop() clears their flag: a closure the rule cannot see.
      'no-unmodified-loop-condition': 'off'
    }
  }
]
