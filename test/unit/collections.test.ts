import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SERVICES } from '../../functions/services.js'
import { KERNEL_COLLECTIONS } from '../../lib/db.js'
import { ALL_COLLECTIONS } from '../support/collections.js'

const repo = resolve(import.meta.dirname, '../..')
const sources = execFileSync('git', ['ls-files', 'lib', 'domain', 'functions', 'orchestrator', 'emulators'], { cwd: repo, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.endsWith('.ts'))

describe('the Firestore collections', () => {
  it('are each declared once: by the kernel or by one service of the registry', () => {
    const counts = new Map<string, number>()
    for (const c of ALL_COLLECTIONS) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect([...counts].filter(([, n]) => n > 1)).toEqual([])
    expect(SERVICES.every((s) => s.collections.every((c) => !(KERNEL_COLLECTIONS as readonly string[]).includes(c)))).toBe(true)
  })

  it('used by the code (db.col(…)) are all declared, so rules, indexes and TTL policies know them', () => {
    const used = new Set<string>()
    for (const file of sources) {
      for (const m of readFileSync(resolve(repo, file), 'utf8').matchAll(/\.col\('([a-z_]+)'\)/g)) used.add(m[1]!)
    }
    expect(used.size).toBeGreaterThan(5)
    expect([...used].filter((c) => !ALL_COLLECTIONS.includes(c))).toEqual([])
  })
})
