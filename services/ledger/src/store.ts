import { createPrismaClient, isCurrency, Money } from "@pgw/kit";
import type { ShopPosition } from "./domain/balances";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

/** The ledger database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}

/** The shop's available and reserved accounts per currency, read in one snapshot. */
export async function readShopPositions(db: Db, shopId: string): Promise<ShopPosition[]> {
  const accounts = await db.account.findMany({ where: { shopId, kind: { in: ["available", "reserved"] } } });
  const positions = new Map<string, ShopPosition>();
  for (const a of accounts) {
    if (!isCurrency(a.currency)) continue;
    const p = positions.get(a.currency) ?? { currency: a.currency, available: new Money(0), reserved: new Money(0) };
    if (a.kind === "available") p.available = new Money(a.balance.toFixed());
    else p.reserved = new Money(a.balance.toFixed());
    positions.set(a.currency, p);
  }
  return [...positions.values()];
}
