import { SERVICES } from '../../functions/services.js'
import { KERNEL_COLLECTIONS } from '../../lib/db.js'

/** Every Firestore collection of the platform: the kernel's and each registered service's. */
export const ALL_COLLECTIONS: readonly string[] = [...KERNEL_COLLECTIONS, ...SERVICES.flatMap((s) => s.collections)]
