import { createHmac, timingSafeEqual } from 'node:crypto'
import { html, type Raw } from '../pages.js'

/**
 * The console forms' CSRF token: an HMAC of a fixed label keyed with the session's key (the SHA-256
 * of the platform_session cookie, lib/auth/tokens.ts). Only a holder of the cookie can compute it,
 * every service computes the same one (a form of one service may post to another), nothing is
 * stored, and it dies with the session. It comes on top of the Origin check (see `checkPagePost`).
 */
const LABEL = 'platform console form v1'

export function csrfToken(session: { key: string }): string {
  return createHmac('sha256', session.key).update(LABEL).digest('base64url')
}

export function csrfValid(session: { key: string }, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length > 100) return false
  const expected = Buffer.from(csrfToken(session))
  const given = Buffer.from(presented)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The hidden field every console form carries. */
export const csrfField = (session: { key: string }): Raw => html`<input type="hidden" name="csrf_token" value="${csrfToken(session)}" />`
