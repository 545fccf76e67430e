import { createPrismaClient } from "@pgw/kit";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

/** The receipts database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}
