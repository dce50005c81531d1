import fc from 'fast-check'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { admission, AdmissionGate, RETRY_AFTER_SECONDS, SERVICE_TIME_TARGET_MS, type AdmissionLimits, type Timers } from '../../../lib/overload.js'

/**
 * A clock that moves only when the test says: timers fire in the order of their deadlines as it
 * passes them, each followed by the promise callbacks it set off, so that they see its time.
 */
class FakeTimers implements Timers {
  time = 0
  now = () => this.time
  private pending: Array<{ at: number; fire: () => void }> = []
  set(ms: number, fire: () => void) {
    const timer = { at: this.time + ms, fire }
    this.pending.push(timer)
    return timer
  }
  clear(handle: unknown) {
    this.pending = this.pending.filter((t) => t !== handle)
  }
  async advance(ms: number) {
    const until = this.time + ms
    for (;;) {
      const due = this.pending.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0]
      if (!due) break
      this.time = due.at
      this.clear(due)
      due.fire()
      await settle()
    }
    this.time = until
  }
}

/** Lets the promises of waiting requests settle. */
const settle = () => new Promise<void>((r) => setImmediate(r))

/** What became of a request: admitted or refused, and when; undefined while it waits. */
type Fate = { admitted: boolean; at: number } | undefined

function arrive(gate: AdmissionGate, clock: FakeTimers): { fate: () => Fate } {
  let fate: Fate
  const entered = gate.enter()
  if (typeof entered === 'boolean') fate = { admitted: entered, at: clock.time }
  else void entered.then((admitted) => (fate = { admitted, at: clock.time }))
  return { fate: () => fate }
}

const limits: AdmissionLimits = { maxConcurrent: 2, maxQueued: 2, maxWaitMs: 500 }

describe('the admission gate', () => {
  it('admits requests at once, with no promise, while a slot is free', () => {
    const gate = new AdmissionGate(limits, new FakeTimers())
    expect(gate.enter()).toBe(true)
    expect(gate.enter()).toBe(true)
    expect(gate.load).toEqual({ inFlight: 2, queued: 0, limit: 2 })
  })

  it.each([
    ['a queue of two', { maxConcurrent: 1, maxQueued: 2, maxWaitMs: 500 }, [true, 'waits', 'waits', false]],
    ['no queue', { maxConcurrent: 1, maxQueued: 0, maxWaitMs: 500 }, [true, false, false, false]],
    ['three slots', { maxConcurrent: 3, maxQueued: 0, maxWaitMs: 500 }, [true, true, true, false]],
  ] as const)('with %s, answers four requests arriving together: admitted, waiting or refused at once', (_, l, expected) => {
    const gate = new AdmissionGate(l, new FakeTimers())
    const got = Array.from({ length: 4 }, () => {
      const entered = gate.enter()
      return typeof entered === 'boolean' ? entered : 'waits'
    })
    expect(got).toEqual(expected)
  })

  it('passes a freed slot to the oldest waiting request, without a gap another could take', async () => {
    const clock = new FakeTimers()
    const gate = new AdmissionGate(limits, clock)
    arrive(gate, clock)
    arrive(gate, clock)
    const third = arrive(gate, clock)
    const fourth = arrive(gate, clock)
    await clock.advance(100)
    gate.leave(100)
    await settle()
    expect(third.fate()).toEqual({ admitted: true, at: 100 })
    expect(fourth.fate()).toBeUndefined()
    expect(gate.load).toMatchObject({ inFlight: 2, queued: 1 })
  })

  it('refuses a waiting request when its wait runs out, and frees its place in the queue', async () => {
    const clock = new FakeTimers()
    const gate = new AdmissionGate(limits, clock)
    arrive(gate, clock)
    arrive(gate, clock)
    const waiting = arrive(gate, clock)
    await clock.advance(499)
    await settle()
    expect(waiting.fate()).toBeUndefined()
    await clock.advance(1)
    await settle()
    expect(waiting.fate()).toEqual({ admitted: false, at: 500 })
    expect(gate.load).toMatchObject({ inFlight: 2, queued: 0 })
    // The slots still belong to the two in flight: ending them frees them, and nothing is handed to the refused one.
    gate.leave(500)
    gate.leave(500)
    expect(gate.load).toMatchObject({ inFlight: 0, queued: 0 })
  })

  describe('its limit, while more requests arrive than it admits', () => {
    /** A gate of 20 slots, all taken, with one request waiting: pressed. */
    function pressed() {
      const clock = new FakeTimers()
      const gate = new AdmissionGate({ maxConcurrent: 20, maxQueued: 5, maxWaitMs: 500 }, clock)
      for (let i = 0; i < 21; i++) arrive(gate, clock)
      return { clock, gate }
    }

    it('comes down by a tenth when an admitted request took longer than the target, once per target however many do', async () => {
      const { clock, gate } = pressed()
      gate.leave(SERVICE_TIME_TARGET_MS + 1)
      gate.leave(SERVICE_TIME_TARGET_MS + 1)
      expect(gate.load.limit).toBe(18)
      // Two left, but the limit is 18: the waiting request waits on.
      expect(gate.load).toMatchObject({ inFlight: 18, queued: 1 })
      await clock.advance(SERVICE_TIME_TARGET_MS)
      gate.leave(SERVICE_TIME_TARGET_MS + 1)
      expect(gate.load.limit).toBe(16)
    })

    it('goes back up by one for each limit’s worth of requests answered within the target, up to MAX_CONCURRENT_REQUESTS', () => {
      const { clock, gate } = pressed()
      gate.leave(SERVICE_TIME_TARGET_MS + 1)
      expect(gate.load.limit).toBe(18)
      // More keep coming: some wait, one is refused; then about 18 timely answers (1/18 each, a little less as it grows) make one more slot.
      for (let i = 0; i < 6; i++) arrive(gate, clock)
      for (let i = 0; i < 18; i++) gate.leave(10)
      expect(gate.load.limit).toBe(18)
      gate.leave(10)
      expect(gate.load.limit).toBe(19)
      for (let i = 0; i < 40; i++) {
        arrive(gate, clock)
        gate.leave(10)
      }
      expect(gate.load.limit).toBe(20)
    })

    it('stays where it is when nothing waits and nothing was refused: a slow request on an instance with room says nothing of its capacity', async () => {
      const clock = new FakeTimers()
      const gate = new AdmissionGate({ maxConcurrent: 20, maxQueued: 5, maxWaitMs: 500 }, clock)
      arrive(gate, clock)
      gate.leave(60_000)
      expect(gate.load.limit).toBe(20)
    })
  })

  it('holds its bounds and decides every request within the wait, whatever arrives, ends and elapses (property)', async () => {
    type Step = { kind: 'arrive' } | { kind: 'finish' } | { kind: 'elapse'; ms: number }
    const step = fc.oneof(
      fc.constant<Step>({ kind: 'arrive' }),
      fc.constant<Step>({ kind: 'finish' }),
      fc.integer({ min: 1, max: 400 }).map((ms): Step => ({ kind: 'elapse', ms })),
    )
    const limitsArb = fc.record({
      maxConcurrent: fc.integer({ min: 1, max: 12 }),
      maxQueued: fc.integer({ min: 0, max: 4 }),
      maxWaitMs: fc.integer({ min: 0, max: 1000 }),
    })
    await fc.assert(
      fc.asyncProperty(limitsArb, fc.array(step, { maxLength: 60 }), async (l, steps) => {
        const clock = new FakeTimers()
        const gate = new AdmissionGate(l, clock)
        const requests: Array<{ arrived: number; fate: () => Fate; finished: boolean }> = []
        let limitWas = l.maxConcurrent
        for (const s of steps) {
          if (s.kind === 'arrive') requests.push({ arrived: clock.time, ...arrive(gate, clock), finished: false })
          if (s.kind === 'elapse') await clock.advance(s.ms)
          if (s.kind === 'finish') {
            const running = requests.find((r) => r.fate()?.admitted && !r.finished)
            if (running) {
              running.finished = true
              gate.leave(clock.time - running.fate()!.at)
            }
          }
          await settle()
          const { inFlight, queued, limit } = gate.load
          const running = requests.filter((r) => r.fate()?.admitted && !r.finished).length
          expect(inFlight).toBe(running)
          expect(inFlight).toBeLessThanOrEqual(l.maxConcurrent)
          expect(queued).toBeLessThanOrEqual(l.maxQueued)
          expect(limit).toBeGreaterThanOrEqual(1)
          expect(limit).toBeLessThanOrEqual(l.maxConcurrent)
          // The limit moves by at most one up, or by about a tenth down.
          expect(limit).toBeLessThanOrEqual(limitWas + 1)
          expect(limit).toBeGreaterThanOrEqual(Math.max(1, Math.floor(limitWas * 0.9) - 1))
          limitWas = limit
          // Nobody waits while a slot under the limit is free.
          if (queued > 0) expect(inFlight).toBeGreaterThanOrEqual(limit)
          for (const r of requests) {
            const fate = r.fate()
            if (fate) expect(fate.at - r.arrived).toBeLessThanOrEqual(l.maxWaitMs)
            else expect(clock.time - r.arrived).toBeLessThan(l.maxWaitMs)
          }
        }
      }),
    )
  })
})

describe('the admission middleware', () => {
  /** An app whose one route holds each request until the test releases it. */
  function heldApp(l: AdmissionLimits) {
    const clock = new FakeTimers()
    const releases: Array<() => void> = []
    const app = new Hono()
    app.use('*', admission(l, clock))
    app.get('/work', async (c) => {
      await new Promise<void>((r) => releases.push(r))
      return c.json({ ok: true })
    })
    return { app, clock, releaseAll: () => releases.splice(0).forEach((r) => r()) }
  }

  it('answers a request past the limit 503 with Retry-After and a detail, at once, and serves the others', async () => {
    const { app, releaseAll } = heldApp({ maxConcurrent: 2, maxQueued: 0, maxWaitMs: 500 })
    const held = [app.request('/work'), app.request('/work')]
    const refused = await app.request('/work')
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS))
    expect(await refused.json()).toEqual({ detail: expect.stringMatching(/at capacity .*send the request again after Retry-After seconds/) })
    await settle()
    releaseAll()
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200])
    // Their slots are free again.
    const next = app.request('/work')
    await settle()
    releaseAll()
    expect((await next).status).toBe(200)
  })

  it('answers a request that waited its whole wait 503 with Retry-After', async () => {
    const { app, clock, releaseAll } = heldApp({ maxConcurrent: 1, maxQueued: 1, maxWaitMs: 500 })
    const held = app.request('/work')
    const waiting = app.request('/work')
    await settle()
    await clock.advance(500)
    const res = await waiting
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    releaseAll()
    expect((await held).status).toBe(200)
  })

  it('frees the slot of a request whose handler failed', async () => {
    const app = new Hono()
    app.use('*', admission({ maxConcurrent: 1, maxQueued: 0, maxWaitMs: 0 }, new FakeTimers()))
    app.get('/boom', () => {
      throw new Error('boom')
    })
    app.get('/fine', (c) => c.text('fine'))
    expect((await app.request('/boom')).status).toBe(500)
    expect((await app.request('/fine')).status).toBe(200)
  })
})
