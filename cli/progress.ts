import { formatBytes, formatDuration, type Output } from './output.js'

/** How often the progress line is redrawn: often enough to look alive, rarely enough to cost nothing. */
const REDRAW_MS = 100
const BAR_WIDTH = 24

/** "[##########--------------]  42%  430.0 MiB / 1.0 GiB  215.3 MiB/s  ETA 3s" */
export function progressLine(done: number, total: number, seconds: number): string {
  const fraction = total > 0 ? Math.min(1, done / total) : 1
  const filled = Math.round(fraction * BAR_WIDTH)
  const rate = seconds > 0 ? done / seconds : 0
  const eta = rate > 0 && done < total ? `ETA ${formatDuration((total - done) / rate)}` : ''
  return [
    `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`,
    `${String(Math.floor(fraction * 100)).padStart(3)}%`,
    `${formatBytes(done)} / ${formatBytes(total)}`,
    rate > 0 ? `${formatBytes(rate)}/s` : '',
    eta,
  ]
    .filter(Boolean)
    .join('  ')
}

/**
 * A transfer's progress bar, redrawn in place on a terminal (Output.status: nothing without a
 * terminal or with --json), at most every REDRAW_MS.
 */
export class Progress {
  private readonly started = performance.now()
  private drawn = 0

  constructor(
    private readonly out: Output,
    private readonly total: number,
  ) {}

  /** For TransferOptions.onProgress. */
  readonly update = (done: number) => {
    if (!this.out.live) return
    const now = performance.now()
    if (now - this.drawn < REDRAW_MS && done < this.total) return
    this.drawn = now
    this.out.status(progressLine(done, this.total, (now - this.started) / 1000))
  }

  /** Seconds since the transfer started. */
  get seconds(): number {
    return (performance.now() - this.started) / 1000
  }

  done() {
    this.out.clearStatus()
  }
}
