// Lint rules for the whole repository (npm run lint). Type checking itself is tsc's job (strict).
import { readdirSync } from 'node:fs'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/**
 * The import boundaries of DESIGN.md: dependencies point inward. The kernel (lib/) imports no
 * domain, service, orchestrator, CLI or suite code; the domain (domain/) has no HTTP and knows no
 * service; a service never imports another service; the CLI talks HTTP only and imports nothing
 * of the server. Patterns match the import specifier (relative paths included).
 */
const outside = (...folders) => folders.map((f) => `**/${f}/**`)
const restrict = (patterns, message) => ({ 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }] }] })
const SERVICE_NAMES = readdirSync(new URL('./functions/', import.meta.url), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
const HTTP = ['hono', 'hono/*', '@hono/*']

const boundaries = [
  {
    files: ['lib/**/*.ts'],
    rules: restrict(outside('domain', 'functions', 'orchestrator', 'cli', 'emulators'), 'the kernel (lib/) imports only the kernel and libraries'),
  },
  {
    files: ['domain/**/*.ts'],
    rules: restrict([...outside('functions', 'orchestrator', 'cli', 'emulators'), ...HTTP], 'the domain has no HTTP and knows no service'),
  },
  {
    files: ['orchestrator/**/*.ts'],
    rules: restrict(outside('functions', 'cli', 'emulators'), 'the orchestrator uses the kernel and the domain, never a service'),
  },
  ...SERVICE_NAMES.map((name) => ({
    files: [`functions/${name}/**/*.ts`],
    rules: restrict(
      [
        ...SERVICE_NAMES.filter((other) => other !== name).flatMap((other) => [`**/functions/${other}/**`, `../${other}/**`, `../../${other}/**`]),
        ...outside('cli', 'emulators', 'orchestrator'),
      ],
      `a service imports the kernel and the domain, never another service (functions/${name})`,
    ),
  })),
  {
    files: ['cli/**/*.ts'],
    rules: restrict(
      outside('lib', 'domain', 'functions', 'orchestrator', 'emulators', 'test'),
      'the CLI talks HTTP to the public API only: it imports nothing of the server',
    ),
  },
]

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.local/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        performance: 'readonly',
        AbortController: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // A closure may read a variable that is assigned once, later (a server answering before it is ready).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  ...boundaries,
  {
    // Tests read loosely typed JSON bodies.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
)
