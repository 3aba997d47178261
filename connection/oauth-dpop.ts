/**
 * The key of DPoP (RFC 9449, SEP-1932) for a sign-in's tokens. The SDK does the protocol once a provider's `dpop()`
 * hands it a session (connection/oauth-provider.ts): a proof at the token endpoint and on every request, the `DPoP`
 * scheme for a DPoP-bound token, the retry with a server's nonce at both. What it lacks is a key that outlives the
 * process, as the tokens it is bound to do: a sign-in's key pair is made extractable, its private JWK stored with the
 * tokens (connection/oauth-store.ts: a 0600 file), and imported again, not extractable, when a connection needs it.
 */
import {
  type AuthorizationServerMetadata,
  DPOP_SUPPORTED_ALGS,
  type DpopAlg,
  type DpopKeyPair,
  DpopSession,
  generateDpopKeyPair,
} from "@modelcontextprotocol/client";
import { calculateJwkThumbprint, exportJWK, importJWK, type JWK } from "jose";
import type { StoredDpopKey } from "./oauth-store.ts";

/** What the SDK signs with first: small keys, fast proofs, and what authorization servers take most. */
const PREFERRED_ALG: DpopAlg = "ES256";
/** The private members of a JWK (RFC 7518 §6.2.2, §6.3.2): never in a proof's header. */
const PRIVATE_MEMBERS = new Set(["d", "p", "q", "dp", "dq", "qi", "oth"]);

/**
 * The algorithm of a new key: ES256 when the authorization server takes it (or names none), else the first it names
 * that the SDK signs with; none when it names only others.
 */
export function dpopAlgorithm(metadata: AuthorizationServerMetadata | undefined): DpopAlg | undefined {
  // RFC 9449 §5.1's field: the SDK keeps every field of the metadata, but types only those it reads.
  const named = (metadata as { dpop_signing_alg_values_supported?: unknown } | undefined)?.dpop_signing_alg_values_supported;
  if (!Array.isArray(named) || named.length === 0 || named.includes(PREFERRED_ALG)) return PREFERRED_ALG;
  return DPOP_SUPPORTED_ALGS.find((alg) => (named as unknown[]).includes(alg));
}

/** A new key pair for a sign-in: its session, and the key as it is stored once the tokens are bound to it. */
export async function newDpopKey(alg: DpopAlg): Promise<{ session: DpopSession; stored: StoredDpopKey }> {
  const keyPair = await generateDpopKeyPair({ alg, extractable: true });
  const jwk = await exportJWK(keyPair.privateKey);
  return { session: await DpopSession.create({ keyPair }), stored: { alg, jwk: { ...jwk } } };
}

/** The session of a stored key; throws when the key is not one the SDK can sign with. */
export async function storedDpopSession(stored: StoredDpopKey): Promise<DpopSession> {
  const alg = DPOP_SUPPORTED_ALGS.find((known) => known === stored.alg);
  if (!alg) throw new Error(`the stored DPoP key's algorithm "${stored.alg}" is not one DPoP proofs are signed with`);
  const privateJwk = stored.jwk as JWK;
  const publicJwk: JWK = Object.fromEntries(Object.entries(privateJwk).filter(([member]) => !PRIVATE_MEMBERS.has(member)));
  const [privateKey, publicKey, thumbprint] = await Promise.all([
    importJWK(privateJwk, alg, { extractable: false }),
    importJWK(publicJwk, alg),
    calculateJwkThumbprint(publicJwk, "sha256"),
  ]);
  // A JWK of a symmetric key imports as bytes, not a key pair: never one of ours.
  if (privateKey instanceof Uint8Array || publicKey instanceof Uint8Array) throw new Error("the stored DPoP key is not a key pair");
  const keyPair: DpopKeyPair = { privateKey, publicKey, publicJwk, thumbprint, alg };
  return DpopSession.create({ keyPair });
}
