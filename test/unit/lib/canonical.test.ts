import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson, rfc8785Json } from '../../../lib/canonical.js'

// RFC 8785's published test vectors (test/fixtures/jcs/README.md says where they come from).
const fixture = (dir: 'input' | 'output', name: string) => readFileSync(new URL(`../../fixtures/jcs/${dir}/${name}.json`, import.meta.url), 'utf8')
const VECTORS = ['arrays', 'french', 'structures', 'unicode', 'values', 'weird']

// Strings of any UTF-16 code units, paired and lone surrogates included: what a JSON request can carry.
const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) })
const wellFormedJson = fc.jsonValue({ stringUnit: 'binary' })

describe('RFC 8785 canonical JSON', () => {
  it.each(VECTORS)('writes the published canonical form of the %s vector byte for byte', (name) => {
    expect(rfc8785Json(JSON.parse(fixture('input', name)))).toBe(fixture('output', name))
  })

  it.each([
    ['sorts keys by UTF-16 code units, not by code points', { '\u{1F600}': 1, '\uFB33': 2, '\u20AC': 3 }, '{"\u20AC":3,"\u{1F600}":1,"\uFB33":2}'],
    [
      'writes numbers as ECMAScript does',
      [1e21, 1e-7, -0, 0.000001, 333333333.3333333, 9007199254740994],
      '[1e+21,1e-7,0,0.000001,333333333.3333333,9007199254740994]',
    ],
    ['escapes only what JSON must, in lower-case hex', '\u0001\u001f"\\/\u007f\u2028', '"\\u0001\\u001f\\"\\\\/\u007f\u2028"'],
    ['leaves out undefined members', { b: undefined, a: null }, '{"a":null}'],
  ])('%s', (_, value, text) => {
    expect(rfc8785Json(value)).toBe(text)
  })

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a lone high surrogate', 'a\uD800b'],
    ['a lone low surrogate as a key', { '\uDC00': 1 }],
    ['undefined', undefined],
  ])('refuses %s, which RFC 8785 has no form for', (_, value) => {
    expect(() => rfc8785Json(value)).toThrow()
  })

  // testdata/README.md of the RFC's reference implementations: the first 100,000 lines of
  // `<IEEE-754 bits in hex>,<ES6 serialization>\n`, generated deterministically, hash to this.
  it("serializes the first 100,000 numbers of the RFC's ES6 test sequence as published (SHA-256 of the lines)", () => {
    expect(createHash('sha256').update(es6TestLines(100_000)).digest('hex')).toBe('22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7')
  })

  it('gives equal text for equal values whatever their key order, and is its own fixed point', () => {
    fc.assert(
      fc.property(wellFormedJson, (value) => {
        const text = rfc8785Json(value)
        expect(rfc8785Json(reverseKeys(value))).toBe(text)
        expect(rfc8785Json(JSON.parse(text))).toBe(text)
      }),
    )
  })
})

describe("the platform's own canonical JSON (audit hashes, legacy snapshots)", () => {
  it('writes the same text as RFC 8785 for every value RFC 8785 accepts, so hashes taken before still verify with a JCS library', () => {
    fc.assert(
      fc.property(wellFormedJson, (value) => {
        expect(canonicalJson(value)).toBe(rfc8785Json(value))
      }),
    )
  })

  it('writes the published RFC 8785 vectors byte for byte too', () => {
    for (const name of VECTORS) expect(canonicalJson(JSON.parse(fixture('input', name)))).toBe(fixture('output', name))
  })

  it('never refuses a string: a lone surrogate is written as an escape, which reads back as the same string', () => {
    fc.assert(
      fc.property(anyUnits, anyUnits, (key, value) => {
        const text = canonicalJson({ [key]: value })
        expect(JSON.parse(text)).toEqual({ [key]: value })
      }),
    )
  })
})

function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys)
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reverseKeys(v)]),
    )
  return value
}

/** testdata/numgen.js of https://github.com/cyberphone/json-canonicalization, with our serializer for the expected column. */
function es6TestLines(count: number): string {
  const staticBits = [
    0x0000000000000000n,
    0x8000000000000000n,
    0x0000000000000001n,
    0x8000000000000001n,
    0xc46696695dbd1cc3n,
    0xc43211ede4974a35n,
    0xc3fce97ca0f21056n,
    0xc3c7213080c1a6acn,
    0xc39280f39a348556n,
    0xc35d9b1f5d20d557n,
    0xc327af4c4a80aaacn,
    0xc2f2f2a36ecd5556n,
    0xc2be51057e155558n,
    0xc28840d131aaaaacn,
    0xc253670dc1555557n,
    0xc21f0b4935555557n,
    0xc1e8d5d42aaaaaacn,
    0xc1b3de4355555556n,
    0xc17fca0555555556n,
    0xc1496e6aaaaaaaabn,
    0xc114585555555555n,
    0xc0e046aaaaaaaaabn,
    0xc0aa0aaaaaaaaaaan,
    0xc074d55555555555n,
    0xc040aaaaaaaaaaabn,
    0xc00aaaaaaaaaaaabn,
    0xbfd5555555555555n,
    0xbfa1111111111111n,
    0xbf6b4e81b4e81b4fn,
    0xbf35d867c3ece2a5n,
    0xbf0179ec9cbd821en,
    0xbecbf647612f3696n,
    0xbe965e9f80f29212n,
    0xbe61e54c672874dbn,
    0xbe2ca213d840baf8n,
    0xbdf6e80fe033c8c6n,
    0xbdc2533fe68fd3d2n,
    0xbd8d51ffd74c861cn,
    0xbd5774ccac3d3817n,
    0xbd22c3d6f030f9acn,
    0xbcee0624b3818f79n,
    0xbcb804ea293472c7n,
    0xbc833721ba905bd3n,
    0xbc4ebe9c5db3c61en,
    0xbc18987d17c304e5n,
    0xbbe3ad30dfcf371dn,
    0xbbaf7b816618582fn,
    0xbb792f9ab81379bfn,
    0xbb442615600f9499n,
    0xbb101e77800c76e1n,
    0xbad9ca58cce0be35n,
    0xbaa4a1e0a3e6fe90n,
    0xba708180831f320dn,
    0xba3a68cd9e985016n,
    0x446696695dbd1cc3n,
    0x443211ede4974a35n,
    0x43fce97ca0f21056n,
    0x43c7213080c1a6acn,
    0x439280f39a348556n,
    0x435d9b1f5d20d557n,
    0x4327af4c4a80aaacn,
    0x42f2f2a36ecd5556n,
    0x42be51057e155558n,
    0x428840d131aaaaacn,
    0x4253670dc1555557n,
    0x421f0b4935555557n,
    0x41e8d5d42aaaaaacn,
    0x41b3de4355555556n,
    0x417fca0555555556n,
    0x41496e6aaaaaaaabn,
    0x4114585555555555n,
    0x40e046aaaaaaaaabn,
    0x40aa0aaaaaaaaaaan,
    0x4074d55555555555n,
    0x4040aaaaaaaaaaabn,
    0x400aaaaaaaaaaaabn,
    0x3fd5555555555555n,
    0x3fa1111111111111n,
    0x3f6b4e81b4e81b4fn,
    0x3f35d867c3ece2a5n,
    0x3f0179ec9cbd821en,
    0x3ecbf647612f3696n,
    0x3e965e9f80f29212n,
    0x3e61e54c672874dbn,
    0x3e2ca213d840baf8n,
    0x3df6e80fe033c8c6n,
    0x3dc2533fe68fd3d2n,
    0x3d8d51ffd74c861cn,
    0x3d5774ccac3d3817n,
    0x3d22c3d6f030f9acn,
    0x3cee0624b3818f79n,
    0x3cb804ea293472c7n,
    0x3c833721ba905bd3n,
    0x3c4ebe9c5db3c61en,
    0x3c18987d17c304e5n,
    0x3be3ad30dfcf371dn,
    0x3baf7b816618582fn,
    0x3b792f9ab81379bfn,
    0x3b442615600f9499n,
    0x3b101e77800c76e1n,
    0x3ad9ca58cce0be35n,
    0x3aa4a1e0a3e6fe90n,
    0x3a708180831f320dn,
    0x3a3a68cd9e985016n,
    0x4024000000000000n,
    0x4014000000000000n,
    0x3fe0000000000000n,
    0x3fa999999999999an,
    0x3f747ae147ae147bn,
    0x3f40624dd2f1a9fcn,
    0x3f0a36e2eb1c432dn,
    0x3ed4f8b588e368f1n,
    0x3ea0c6f7a0b5ed8dn,
    0x3e6ad7f29abcaf48n,
    0x3e35798ee2308c3an,
    0x3ed539223589fa95n,
    0x3ed4ff26cd5a7781n,
    0x3ed4f95a762283ffn,
    0x3ed4f8c60703520cn,
    0x3ed4f8b72f19cd0dn,
    0x3ed4f8b5b31c0c8dn,
    0x3ed4f8b58d1c461an,
    0x3ed4f8b5894f7f0en,
    0x3ed4f8b588ee37f3n,
    0x3ed4f8b588e47da4n,
    0x3ed4f8b588e3849cn,
    0x3ed4f8b588e36bb5n,
    0x3ed4f8b588e36937n,
    0x3ed4f8b588e368f8n,
    0x3ed4f8b588e368f1n,
    0x3ff0000000000000n,
    0xbff0000000000000n,
    0xbfeffffffffffffan,
    0xbfeffffffffffffbn,
    0x3feffffffffffffan,
    0x3feffffffffffffbn,
    0x3feffffffffffffcn,
    0x3feffffffffffffen,
    0xbfefffffffffffffn,
    0xbfefffffffffffffn,
    0x3fefffffffffffffn,
    0x3fefffffffffffffn,
    0x3fd3333333333332n,
    0x3fd3333333333333n,
    0x3fd3333333333334n,
    0x0010000000000000n,
    0x000ffffffffffffdn,
    0x000fffffffffffffn,
    0x7fefffffffffffffn,
    0xffefffffffffffffn,
    0x4340000000000000n,
    0xc340000000000000n,
    0x4430000000000000n,
    0x44b52d02c7e14af5n,
    0x44b52d02c7e14af6n,
    0x44b52d02c7e14af7n,
    0x444b1ae4d6e2ef4en,
    0x444b1ae4d6e2ef4fn,
    0x444b1ae4d6e2ef50n,
    0x3eb0c6f7a0b5ed8cn,
    0x3eb0c6f7a0b5ed8dn,
    0x41b3de4355555553n,
    0x41b3de4355555554n,
    0x41b3de4355555555n,
    0x41b3de4355555556n,
    0x41b3de4355555557n,
    0xbecbf647612f3696n,
    0x43143ff3c1cb0959n,
  ]
  const bits = new BigUint64Array(1)
  const float = new Float64Array(bits.buffer)
  const fromBits = (b: bigint) => {
    bits[0] = b
    return float[0]!
  }
  const toBits = (f: number) => {
    float[0] = f
    return bits[0]!
  }
  const serial = Array.from({ length: 2000 }, (_, i) => fromBits(0x0010000000000000n + BigInt(i)))
  const fixed = [...staticBits.map(fromBits), ...serial]
  // After the fixed values: the doubles of a SHA-256 chain (each block the hash of the one before), skipping 0 and non-finite ones.
  let block: Buffer = Buffer.alloc(32)
  let pending: number[] = []
  const random = () => {
    for (;;) {
      if (!pending.length) {
        block = createHash('sha256').update(block).digest()
        pending = Array.from(new Float64Array(block.buffer.slice(block.byteOffset, block.byteOffset + 32)))
      }
      const f = pending.shift()!
      if (f !== 0 && Number.isFinite(f)) return f
    }
  }
  const lines: string[] = []
  for (let i = 0; i < count; i++) {
    const f = i < fixed.length ? fixed[i]! : random()
    lines.push(`${toBits(f).toString(16)},${rfc8785Json(f)}\n`)
  }
  return lines.join('')
}
