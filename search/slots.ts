/**
 * Shares the first slots of an answer among the intents of a request that names several (search/intents.ts).
 * "Will it rain in Lisbon, and a hotel near the old town?" needs a weather tool and a travel tool, but on score
 * alone travel tools may take all five slots. The best-scoring tool keeps the first slot; each next one goes to the
 * candidate with the best mix of its own score and how much it serves the intents the tools already chosen serve
 * least (xQuAD: Santos, Macdonald and Ounis, WWW 2010).
 */

/**
 * How many tools one ToolSearch call loads at most: the slots of an answer (the description promises it,
 * tool-search.ts applies it, the index shares them among a request's intents).
 */
export const TOOLS_PER_SEARCH = 5;

/** Weight of serving intents not yet served, against the candidate's own score (both from 0 to 1). */
const DIVERSITY = 0.5;

export interface SlotCandidate {
  score: number;
  /** How much the candidate serves each intent of the request, from 0 to 1, in the order of the intents' weights. */
  serves: readonly number[];
}

/**
 * The order to answer in, as indices into `candidates` (which come best score first): the first `slots` shared
 * among the intents, then the rest in score order.
 */
export function shareSlots(candidates: readonly SlotCandidate[], intentWeights: readonly number[], slots: number): number[] {
  const totalWeight = intentWeights.reduce((sum, weight) => sum + weight, 0);
  const bestScore = candidates[0]?.score ?? 0;
  if (totalWeight <= 0 || bestScore <= 0) return candidates.map((_, i) => i);
  const unserved = intentWeights.map((weight) => weight / totalWeight);
  const left = candidates.map((_, i) => i);
  const order: number[] = [];
  const take = (at: number) => {
    const [chosen] = left.splice(at, 1);
    candidates[chosen].serves.forEach((share, intent) => (unserved[intent] *= 1 - share));
    order.push(chosen);
  };
  take(0);
  while (order.length < slots && left.length > 0) {
    const value = (candidate: SlotCandidate) =>
      (1 - DIVERSITY) * (candidate.score / bestScore) +
      DIVERSITY * candidate.serves.reduce((sum, share, intent) => sum + share * unserved[intent], 0);
    let best = 0;
    for (let at = 1; at < left.length; at++) if (value(candidates[left[at]]) > value(candidates[left[best]])) best = at;
    take(best);
  }
  return [...order, ...left];
}
