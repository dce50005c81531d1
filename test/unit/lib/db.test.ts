import type { DocumentReference, DocumentSnapshot, Firestore } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Db, isEmulatorAbort, isRetryableTransaction, LostRace, TRANSACTION_RETRY, type TransactionRetry } from '../../../lib/db.js'
import { conflict, isContention } from '../../../lib/errors.js'

/** What the Firestore emulator throws for a transaction it aborted for a concurrent one. */
const emulatorAbort = () => Object.assign(new Error('3 INVALID_ARGUMENT: Transaction is invalid or closed.'), { code: 3 })
/** What Firestore throws for a transaction that lost to a concurrent one. */
const aborted = () => Object.assign(new Error('10 ABORTED: Too much contention on these documents. Please try again.'), { code: 10 })

const failedPrecondition = () =>
  Object.assign(new Error('9 FAILED_PRECONDITION: the stored version does not match the required base version'), { code: 9 })

/** Time that passes only by the retries' waits (and `attemptMs` per attempt), with the random draws given. */
function fakeTiming(draws: () => number = () => 1): TransactionRetry & { clock: { now: number }; waits: number[] } {
  const clock = { now: 0 }
  const waits: number[] = []
  return {
    ...TRANSACTION_RETRY,
    clock,
    waits,
    now: () => clock.now,
    sleep: async (ms) => {
      waits.push(ms)
      clock.now += ms
    },
    random: draws,
  }
}

/** A client whose runTransaction fails with `failures` in turn, then runs the function; each attempt takes `attemptMs`. */
function clientFailing(failures: Error[], timing = fakeTiming(), attemptMs = 0) {
  const options: unknown[] = []
  const firestore = {
    runTransaction: async (fn: (tx: unknown) => Promise<unknown>, opts: unknown) => {
      options.push(opts)
      timing.clock.now += attemptMs
      const failure = failures[options.length - 1]
      if (failure) throw failure
      return fn({})
    },
  }
  return { db: new Db(firestore as unknown as Firestore, '', timing), calls: () => options.length, options, timing }
}

describe('Db.transaction', () => {
  it.each([
    ['the emulator aborted it for a concurrent one', emulatorAbort],
    ['Firestore aborted it (ABORTED)', aborted],
    ['Firestore was unavailable', () => Object.assign(new Error('14 UNAVAILABLE'), { code: 14 })],
  ])('runs a transaction again when %s, and answers its result', async (_, failure) => {
    const { db, calls } = clientFailing([failure(), failure()])
    await expect(db.transaction(async () => 'done')).resolves.toBe('done')
    expect(calls()).toBe(3)
  })

  it('asks the client library for one attempt, so that its waits of a second and more never run', async () => {
    const { db, options } = clientFailing([aborted()])
    await db.transaction(async () => 'done')
    expect(options).toEqual([{ maxAttempts: 1 }, { maxAttempts: 1 }])
  })

  it('hands a read-only transaction its options unchanged', async () => {
    const { db, options } = clientFailing([])
    await db.transaction(async () => 'done', { readOnly: true })
    expect(options).toEqual([{ readOnly: true }])
  })

  it('waits a random time below a doubling ceiling between attempts', async () => {
    const { db, timing } = clientFailing(
      Array.from({ length: 6 }, aborted),
      fakeTiming(() => 0.5),
    )
    await db.transaction(async () => 'done')
    const { baseDelayMs, maxDelayMs } = TRANSACTION_RETRY
    expect(timing.waits).toEqual([0, 1, 2, 3, 4, 5].map((n) => 0.5 * Math.min(maxDelayMs, baseDelayMs * 2 ** n)))
  })

  it('gives up once another attempt would start past the budget: a race still lost is a LostRace, answered 409', async () => {
    // Each attempt takes 300 ms: the fifth would start after the budget of 1 s.
    const { db, calls, timing } = clientFailing(
      Array.from({ length: 10 }, aborted),
      fakeTiming(() => 1),
      300,
    )
    const err = await db.transaction(async () => 'done').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LostRace)
    expect((err as LostRace).message).toMatch(/lost to concurrent transactions 4 times: 10 ABORTED/)
    expect(isContention(err)).toBe(true)
    expect(calls()).toBe(4)
    expect(timing.clock.now).toBeLessThanOrEqual(TRANSACTION_RETRY.budgetMs + 300)
  })

  it('runs again a transaction that lost a deadlock the emulator broke after its 2 s lock timeout, spread over the budget, up to three such losses', async () => {
    const lockTimeout = () => Object.assign(new Error('10 ABORTED: Transaction lock timeout.'), { code: 10 })
    const deadlocked = clientFailing(
      Array.from({ length: 10 }, lockTimeout),
      fakeTiming(() => 0.5),
      2_000,
    )
    await expect(deadlocked.db.transaction(async () => 'done')).rejects.toBeInstanceOf(LostRace)
    expect(deadlocked.calls()).toBe(3)
    // Half of the budget each time: the losers of one deadlock do not meet again.
    expect(deadlocked.timing.waits).toEqual([500, 500])
    const once = clientFailing(
      [lockTimeout()],
      fakeTiming(() => 0.5),
      2_000,
    )
    await expect(once.db.transaction(async () => 'done')).resolves.toBe('done')
  })

  it('gives up at once on a transient failure that took longer than the budget', async () => {
    const slowTimeout = Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4 })
    const { db, calls } = clientFailing([slowTimeout], fakeTiming(), 2_000)
    await expect(db.transaction(async () => 'done')).rejects.toBe(slowTimeout)
    expect(calls()).toBe(1)
  })

  it('gives up on a transient failure with the failure itself', async () => {
    const unavailable = () => Object.assign(new Error('14 UNAVAILABLE'), { code: 14 })
    const { db } = clientFailing(
      Array.from({ length: 10 }, unavailable),
      fakeTiming(() => 1),
      300,
    )
    await expect(db.transaction(async () => 'done')).rejects.toMatchObject({ code: 14 })
  })

  it.each([
    ['a refusal of the transaction function', conflict('run already cancelled')],
    ['a failed precondition of a write it did not make with writeIfUnchanged (a missing index, say)', failedPrecondition()],
    ['another INVALID_ARGUMENT', Object.assign(new Error('3 INVALID_ARGUMENT: a value is not valid'), { code: 3 })],
    ['a missing permission', Object.assign(new Error('7 PERMISSION_DENIED'), { code: 7 })],
  ])('does not run again after %s', async (_, err) => {
    const { db, calls } = clientFailing([err])
    await expect(db.transaction(async () => 'done')).rejects.toBe(err)
    expect(calls()).toBe(1)
  })

  it('runs an attempt again when the document it wrote with writeIfUnchanged was written by another since it was read', async () => {
    const writes: unknown[][] = []
    const tx = { update: (...args: unknown[]) => writes.push(['update', ...args]), create: (...args: unknown[]) => writes.push(['create', ...args]) }
    let attempts = 0
    const firestore = {
      runTransaction: async (fn: (tx: unknown) => Promise<unknown>) => {
        const result = await fn(tx)
        if (++attempts === 1) throw failedPrecondition()
        return result
      },
    }
    const db = new Db(firestore as unknown as Firestore, '', fakeTiming())
    const updateTime = { seconds: 1 }
    const head = { exists: true, ref: 'head', updateTime } as unknown as DocumentSnapshot
    const absent = { exists: false, ref: 'new-head' } as unknown as DocumentSnapshot
    await expect(
      db.transaction(async (t) => {
        db.writeIfUnchanged(t, head, { seq: 2 })
        db.writeIfUnchanged(t, absent, { seq: 1 })
        return 'done'
      }),
    ).resolves.toBe('done')
    expect(attempts).toBe(2)
    // The write carries the update time it was read at; an absent document is created, so that one created since fails.
    expect(writes[0]).toEqual(['update', 'head', { seq: 2 }, { lastUpdateTime: updateTime }])
    expect(writes[1]).toEqual(['create', 'new-head', { seq: 1 }])
  })

  it('never starts an attempt past its budget, whatever the draws and the attempts’ durations (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: 0, max: 0.999_999, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 60 }),
        async (draws, attemptMs, failures) => {
          let i = 0
          const starts: number[] = []
          const timing = fakeTiming(() => draws[i++ % draws.length]!)
          const firestore = {
            runTransaction: async (fn: (tx: unknown) => Promise<unknown>) => {
              starts.push(timing.clock.now)
              timing.clock.now += attemptMs
              if (starts.length <= failures) throw aborted()
              return fn({})
            },
          }
          const db = new Db(firestore as unknown as Firestore, '', timing)
          const outcome = await db.transaction(async () => 'done').catch((err: Error) => err)
          for (const start of starts) expect(start).toBeLessThanOrEqual(TRANSACTION_RETRY.budgetMs)
          // Attempts of at most 400 ms: a second one always starts within the budget.
          if (failures > 0) expect(starts.length).toBeGreaterThanOrEqual(2)
          for (const [n, wait] of timing.waits.entries()) {
            expect(wait).toBeGreaterThanOrEqual(0)
            expect(wait).toBeLessThan(Math.min(TRANSACTION_RETRY.maxDelayMs, TRANSACTION_RETRY.baseDelayMs * 2 ** n) + 1e-9)
          }
          // It succeeds exactly when the attempt that succeeds began within the budget.
          if (outcome === 'done') expect(starts.length).toBe(failures + 1)
          else expect(starts.length).toBeLessThanOrEqual(failures)
        },
      ),
    )
  })
})

describe('Db.takeTurn', () => {
  /** A client that runs each transaction once, recording when its function starts and when its commit ends. */
  function recording() {
    const log: string[] = []
    const firestore = {
      runTransaction: async (fn: (tx: unknown) => Promise<unknown>) => {
        const result = await fn({})
        await new Promise((r) => setTimeout(r, 5))
        return result
      },
    }
    return { db: new Db(firestore as unknown as Firestore, '', fakeTiming()), log }
  }
  const ref = (path: string) => ({ path }) as unknown as DocumentReference

  it('makes the transactions of a process that take a turn at one document run one after the other, commit included', async () => {
    const { db, log } = recording()
    await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        db.transaction(async (tx) => {
          await db.takeTurn(tx, ref('orders/o1'))
          log.push(`${name} reads`)
          await new Promise((r) => setTimeout(r, 5))
          log.push(`${name} writes`)
        }),
      ),
    )
    expect(log).toEqual(['a reads', 'a writes', 'b reads', 'b writes', 'c reads', 'c writes'])
  })

  it('lets transactions at other documents run together', async () => {
    const { db, log } = recording()
    await Promise.all(
      ['o1', 'o2'].map((id) =>
        db.transaction(async (tx) => {
          await db.takeTurn(tx, ref(`orders/${id}`))
          log.push(`${id} reads`)
          await new Promise((r) => setTimeout(r, 5))
          log.push(`${id} writes`)
        }),
      ),
    )
    expect(log.slice(0, 2).sort()).toEqual(['o1 reads', 'o2 reads'])
  })

  it('ends the turn of an attempt that failed, so the next goes', async () => {
    const { db, log } = recording()
    const failing = db.transaction(async (tx) => {
      await db.takeTurn(tx, ref('orders/o1'))
      throw conflict('order is cancelled')
    })
    const next = db.transaction(async (tx) => {
      await db.takeTurn(tx, ref('orders/o1'))
      log.push('next')
    })
    await expect(failing).rejects.toThrow('order is cancelled')
    await next
    expect(log).toEqual(['next'])
  })

  it('refuses a transaction it does not run, whose turn nothing would end', async () => {
    const { db } = recording()
    await expect(db.takeTurn({} as never, ref('orders/o1'))).rejects.toThrow(/Db.transaction/)
  })
})

describe('which transactions run again', () => {
  it.each([
    ['the emulator’s abort', emulatorAbort(), true],
    ['ABORTED', aborted(), true],
    ['UNAVAILABLE', Object.assign(new Error('14 UNAVAILABLE'), { code: 14 }), true],
    ['DEADLINE_EXCEEDED', Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4 }), true],
    ['an expired transaction', Object.assign(new Error('3 INVALID_ARGUMENT: The referenced transaction has expired'), { code: 3 }), true],
    [
      'a create beaten by another (ALREADY_EXISTS: the next attempt reads what is there)',
      Object.assign(new Error('6 ALREADY_EXISTS'), { code: 6 }),
      true,
    ],
    ['FAILED_PRECONDITION, without knowing the attempt', failedPrecondition(), false],
    ['NOT_FOUND', Object.assign(new Error('5 NOT_FOUND'), { code: 5 }), false],
    ['an error without a code', new Error('boom'), false],
    ['something not an error', 'Transaction is invalid or closed', false],
  ])('%s: %s', (_, err, retried) => {
    expect(isRetryableTransaction(err)).toBe(retried)
  })

  it('tells the emulator’s abort from other errors', () => {
    expect(isEmulatorAbort(emulatorAbort())).toBe(true)
    expect(isEmulatorAbort(Object.assign(new Error('Transaction is invalid or closed.'), { code: 10 }))).toBe(false)
    expect(isEmulatorAbort('Transaction is invalid or closed')).toBe(false)
  })
})

describe('Db.afterCommit', () => {
  /** A client that runs the function on a fresh transaction each attempt, then fails the commits of the first `losses` attempts. */
  function clientCommitting(losses: number) {
    let attempts = 0
    const firestore = {
      runTransaction: async (fn: (tx: unknown) => Promise<unknown>) => {
        const result = await fn({ attempt: ++attempts })
        if (attempts <= losses) throw aborted()
        return result
      },
    }
    return new Db(firestore as unknown as Firestore, '', fakeTiming())
  }

  it('does the work of the attempt that committed, once, before the transaction answers, and none of the attempts that lost', async () => {
    const db = clientCommitting(2)
    const done: number[] = []
    const result = await db.transaction(async (tx) => {
      const attempt = (tx as unknown as { attempt: number }).attempt
      expect(db.afterCommit(tx, async () => void done.push(attempt))).toBe(true)
      return attempt
    })
    expect(result).toBe(3)
    // Done by the time the transaction answered.
    expect(done).toEqual([3])
  })

  it('does nothing for a transaction that threw (a refusal): nothing was written', async () => {
    const db = clientCommitting(0)
    const done: string[] = []
    await expect(
      db.transaction(async (tx) => {
        db.afterCommit(tx, async () => void done.push('published'))
        throw conflict('refused')
      }),
    ).rejects.toThrow('refused')
    expect(done).toEqual([])
  })

  it('says so when given a transaction Db.transaction did not run', () => {
    const db = clientCommitting(0)
    expect(db.afterCommit({} as never, async () => undefined)).toBe(false)
  })
})
