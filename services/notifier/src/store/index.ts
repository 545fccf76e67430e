/** The notifier's persistence: every statement the unit runs (README, file map). */
export * from "./deliveries";
