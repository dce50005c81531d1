// Lint rules for the whole repository (npm run lint). Type checking itself is tsc's job (strict).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // cli/api/ is generated (npm run generate); tsc still checks it.
  { ignores: ['node_modules/', 'dist/', '.local/', 'coverage/', 'cli/api/'] },
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
    // Tests read loosely typed JSON bodies.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
)
