import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import type { Account, AccountClaims } from 'oidc-provider'

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>

export interface LocalUser {
  email: string
  password: string
  name?: string
}

interface StoredAccount {
  accountId: string
  email: string
  name: string
  salt: Buffer
  hash: Buffer
}

/**
 * The local identity provider's users, in memory only. Passwords are kept as scrypt hashes and
 * never leave this store: the platform sees tokens, not passwords.
 */
export class AccountStore {
  private readonly byEmail = new Map<string, StoredAccount>()
  private readonly byId = new Map<string, StoredAccount>()
  // Verified against when the e-mail is unknown, so that timing does not tell which e-mails exist.
  private readonly decoy = { salt: randomBytes(16), hash: randomBytes(32) }

  /**
   * The subject is derived from the e-mail, so it stays the same across restarts of the local
   * suite, whose platform records (users linked by subject) survive a restart.
   */
  static subjectFor(email: string): string {
    return createHash('sha256').update(`local-oidc:${email.toLowerCase()}`).digest('hex').slice(0, 32)
  }

  async add(user: LocalUser): Promise<void> {
    const email = user.email.trim().toLowerCase()
    const salt = randomBytes(16)
    const stored: StoredAccount = {
      accountId: AccountStore.subjectFor(email),
      email,
      name: user.name ?? email,
      salt,
      hash: await scryptAsync(user.password, salt, 32),
    }
    this.byEmail.set(email, stored)
    this.byId.set(stored.accountId, stored)
  }

  /** The account whose e-mail and password match, else undefined. */
  async authenticate(email: string, password: string): Promise<Account | undefined> {
    const stored = this.byEmail.get(email.trim().toLowerCase())
    const { salt, hash } = stored ?? this.decoy
    const candidate = await scryptAsync(password, salt, 32)
    return stored && timingSafeEqual(candidate, hash) ? this.toAccount(stored) : undefined
  }

  find(accountId: string): Account | undefined {
    const stored = this.byId.get(accountId)
    return stored ? this.toAccount(stored) : undefined
  }

  /** The identity claims, for access tokens, which the platform reads to link a first-time caller by e-mail. */
  identityClaims(accountId: string): { email: string; email_verified: boolean; name: string } | undefined {
    const stored = this.byId.get(accountId)
    return stored ? { email: stored.email, email_verified: true, name: stored.name } : undefined
  }

  private toAccount(stored: StoredAccount): Account {
    return {
      accountId: stored.accountId,
      // oidc-provider filters these by the granted scopes and claims.
      claims: (): AccountClaims => ({ sub: stored.accountId, email: stored.email, email_verified: true, name: stored.name }),
    }
  }
}
