// Lint rules for the whole repository (npm run lint). Type checking itself is tsc's job (strict).
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, relative, resolve, sep } from 'node:path'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/**
 * The import boundaries of DESIGN.md: dependencies point inward. The kernel (lib/) imports no
 * domain, service, orchestrator, CLI or suite code; the domain (domain/) has no HTTP and knows no
 * service; a service never imports another service; the CLI's own rule is below. Patterns match
 * the import specifier (relative paths included).
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
]

/**
 * The CLI talks to the platform through its public API only: a file under cli/ imports other files
 * under cli/ (the API's types are generated into cli/api/), Node's modules and cli/package.json's
 * own dependencies, never the services' code.
 */
const cliRoot = resolve(import.meta.dirname, 'cli')
const cliDependencies = Object.keys(JSON.parse(readFileSync(resolve(cliRoot, 'package.json'), 'utf8')).dependencies ?? {})
const packageOf = (source) =>
  source
    .split('/')
    .slice(0, source.startsWith('@') ? 2 : 1)
    .join('/')
const cliBoundary = {
  meta: {
    type: 'problem',
    messages: {
      outside: "'{{source}}' is outside cli/: the CLI uses the public API only (its types: npm run generate, in cli/api/)",
      dependency: "'{{source}}' is not a dependency in cli/package.json",
    },
  },
  create(context) {
    const check = (node) => {
      const source = node.source?.value
      if (typeof source !== 'string' || source.startsWith('node:')) return
      if (source.startsWith('.')) {
        const path = relative(cliRoot, resolve(dirname(context.filename), source))
        if (path === '..' || path.startsWith(`..${sep}`)) context.report({ node: node.source, messageId: 'outside', data: { source } })
      } else if (!cliDependencies.includes(packageOf(source))) {
        context.report({ node: node.source, messageId: 'dependency', data: { source } })
      }
    }
    return { ImportDeclaration: check, ExportAllDeclaration: check, ExportNamedDeclaration: check, ImportExpression: check }
  },
}

export default tseslint.config(
  // cli/api/ is generated (npm run generate); tsc still checks it.
  { ignores: ['node_modules/', 'dist/', '.local/', 'coverage/', 'cli/api/', 'docs/.vitepress/dist/', 'docs/.vitepress/cache/'] },
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
  {
    files: ['lib/**/*.ts', 'domain/**/*.ts', 'functions/**/*.ts', 'orchestrator/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='var'][object.name=/^(c|ctx)$/]",
          message: "Hono's c.var copies every variable of the request at each access: use c.get('name')",
        },
      ],
    },
  },
  ...boundaries,
  {
    files: ['cli/**/*.{ts,js}'],
    plugins: { platform: { rules: { 'cli-boundary': cliBoundary } } },
    rules: { 'platform/cli-boundary': 'error' },
  },
  {
    // Tests read loosely typed JSON bodies.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
)
