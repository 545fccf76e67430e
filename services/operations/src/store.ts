import { createPrismaClient } from "@pgw/kit";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;
export type { ApiKey as ApiKeyRow, Merchant as MerchantRow, Shop as ShopRow } from "./generated/prisma/client";

/** The operations database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}
