import type { MiddlewareHandler } from 'hono'

/**
 * How one instance of a service answers more requests than it can serve (docs/operating.md): at
 * most `maxConcurrent` requests are handled at a time, as Cloud Run's --concurrency lets into an
 * instance; a few more wait, each for at most `maxWaitMs`, for a request in flight to end; any
 * other is answered at once 503 with Retry-After. A request is therefore either handled or told to
 * come back within `maxWaitMs`, never left hanging in a queue that only grows.
 */
export interface AdmissionLimits {
  /** Requests handled at a time (MAX_CONCURRENT_REQUESTS). */
  maxConcurrent: number
  /** Requests waiting for one of them to end (MAX_QUEUED_REQUESTS); 0: none wait. */
  maxQueued: number
  /** How long a request waits before it is refused (MAX_QUEUE_WAIT_MS); 0: none wait. */
  maxWaitMs: number
}

/**
 * What an admitted request should take at most: while requests take longer and more arrive than
 * are admitted, the instance is doing too much at a time and admits fewer (`AdmissionGate.leave`).
 * A quarter of the 2 s promised past capacity: the slowest answers of a loaded instance take two to
 * three times the typical one, and a request may have waited MAX_QUEUE_WAIT_MS before it began.
 */
export const SERVICE_TIME_TARGET_MS = 500

/** Time, so that a test drives the gate with a fake clock. */
export interface Timers {
  now(): number
  set(ms: number, fire: () => void): unknown
  clear(handle: unknown): void
}

const realTimers: Timers = {
  now: () => performance.now(),
  set: (ms, fire) => setTimeout(fire, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

interface Waiter {
  admit: (admitted: boolean) => void
  timer: unknown
}

/**
 * Counts the requests in flight and queues the few that wait, first come first served. `enter()`
 * answers synchronously while a slot is free, so a request on an instance below its limit pays a
 * comparison and an increment, no promise and no timer.
 *
 * The limit starts at `maxConcurrent` and adapts below it as TCP's congestion window does
 * (additive increase, multiplicative decrease), only while more requests arrive than it admits
 * (some wait, or one was refused within the last SERVICE_TIME_TARGET_MS): a request that took
 * longer than the target takes a tenth off the limit, at most once per target (a burst of slow
 * answers is one signal), and each answered within it adds 1/limit, one slot for a whole limit's
 * worth of timely answers. So the limit settles where an admitted request is rarely slower than
 * the target. Without that pressure it stays where it is: a slow request on an instance with room
 * (a large report) says nothing about its capacity. Behind Cloud Run, which never sends an
 * instance more than its --concurrency (the same number), the gate is never pressed and the limit
 * stays at `maxConcurrent`; a host that does less in time (the local suite on a small machine)
 * admits fewer.
 */
export class AdmissionGate {
  private inFlight = 0
  /** Fractional (it grows by 1/limit at a time); its whole part is how many are admitted. */
  private limit: number
  private readonly waiting: Waiter[] = []
  private lastRefusal = -Infinity
  private lastDecrease = -Infinity

  constructor(
    readonly limits: AdmissionLimits,
    private readonly timers: Timers = realTimers,
  ) {
    this.limit = limits.maxConcurrent
  }

  /**
   * true: admitted now; false: refused now (every slot taken and the queue full); a promise:
   * queued, resolving true when a slot passed to it, false when `maxWaitMs` ran out first. Each
   * admission is ended by exactly one `leave()`.
   */
  enter(): boolean | Promise<boolean> {
    if (this.inFlight + 1 <= this.limit) {
      this.inFlight++
      return true
    }
    // A wait of 0 is no wait: such a request is refused now rather than on the next turn of the event loop.
    if (this.waiting.length >= this.limits.maxQueued || this.limits.maxWaitMs === 0) {
      this.lastRefusal = this.timers.now()
      return false
    }
    return new Promise<boolean>((admit) => {
      const waiter: Waiter = { admit, timer: undefined }
      waiter.timer = this.timers.set(this.limits.maxWaitMs, () => {
        const at = this.waiting.indexOf(waiter)
        if (at >= 0) this.waiting.splice(at, 1)
        this.lastRefusal = this.timers.now()
        admit(false)
      })
      this.waiting.push(waiter)
    })
  }

  /** A request admitted has ended after `ms`: the limit adapts, and freed slots pass to the oldest waiting requests. */
  leave(ms: number): void {
    const now = this.timers.now()
    if (this.waiting.length > 0 || now - this.lastRefusal < SERVICE_TIME_TARGET_MS) {
      if (ms <= SERVICE_TIME_TARGET_MS) this.limit = Math.min(this.limits.maxConcurrent, this.limit + 1 / this.limit)
      else if (now - this.lastDecrease >= SERVICE_TIME_TARGET_MS) {
        this.limit = Math.max(1, this.limit * 0.9)
        this.lastDecrease = now
      }
    }
    this.inFlight--
    while (this.inFlight + 1 <= this.limit && this.waiting.length > 0) {
      const next = this.waiting.shift()!
      this.timers.clear(next.timer)
      this.inFlight++
      next.admit(true)
    }
  }

  /** Requests in flight and waiting, and how many it admits at a time now (the refusal names it). */
  get load(): { inFlight: number; queued: number; limit: number } {
    return { inFlight: this.inFlight, queued: this.waiting.length, limit: Math.floor(this.limit) }
  }
}

/**
 * Seconds a refused client is asked to wait: a request in flight usually ends well within a second,
 * and Cloud Run starts another instance within seconds; the CLI waits longer on each retry.
 */
export const RETRY_AFTER_SECONDS = 1

/**
 * The service's admission middleware: a request the gate refuses is answered 503 with
 * Retry-After before anything of it is read (no body, no credential, no Firestore), so that a
 * refusal costs next to nothing and nothing was done that a retry could do twice.
 */
export function admission(limits: AdmissionLimits, timers: Timers = realTimers): MiddlewareHandler {
  const gate = new AdmissionGate(limits, timers)
  const refuse = (c: Parameters<MiddlewareHandler>[0]) =>
    c.json(
      {
        detail: `the service is at capacity (${gate.load.limit} requests at a time now); nothing was done, send the request again after Retry-After seconds`,
      },
      503,
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    )
  return async (c, next) => {
    const entered = gate.enter()
    const admitted = typeof entered === 'boolean' ? entered : await entered
    if (!admitted) return refuse(c)
    const started = timers.now()
    try {
      await next()
    } finally {
      gate.leave(timers.now() - started)
    }
  }
}
