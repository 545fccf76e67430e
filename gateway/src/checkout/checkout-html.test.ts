import { create } from "@bufbuild/protobuf";
import { OperationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { checkoutHtml, notFoundHtml, type PageContext } from "./checkout-html";
import { checkoutState, uploadProblem } from "./checkout-view";
import { LANGUAGES, TEXTS } from "./translations";

const context: PageContext = { language: "en", assets: { script: "/pay/assets/checkout-1.js", stylesheet: "/pay/assets/checkout-1.css" } };
const operation = (fields: Record<string, string>) =>
  create(OperationSchema, { operationId: "00000000-0000-4000-8000-000000000000", status: "pending", expectedAmount: "1.00", currency: "RUB", number: "2202000011112222", name: "IVAN PETROV", ...fields });

describe("checkout page", () => {
  it.each([
    ["pending", "awaiting_payment"],
    ["awaiting_confirmation", "awaiting_receipt"],
    ["manual_check", "under_review"],
    ["completed", "paid"],
    ["declined", "declined"],
    ["expired", "expired"],
    ["cancelled", "cancelled"],
  ])("shows %s as %s", (status, state) => {
    expect(checkoutState(status)).toBe(state);
    expect(checkoutHtml(operation({ status }), context)).toContain(`data-status="${status}">${TEXTS.en.states[checkoutState(status)].title}<`);
  });

  it("shows requisites only while the payment can take money or is under review", () => {
    for (const status of ["pending", "awaiting_confirmation", "manual_check"]) expect(checkoutHtml(operation({ status }), context)).toContain("2202000011112222");
    for (const status of ["completed", "declined", "expired", "cancelled"]) {
      const html = checkoutHtml(operation({ status }), context);
      expect(html).not.toContain("2202000011112222");
      expect(html).not.toContain("IVAN PETROV");
      expect(html).toContain(">1.00</span>");
    }
  });

  it("shows the time left while the payer can pay, the receipt form while one is awaited, and polls until the status is final", () => {
    const expiresAt = "2030-01-02T03:04:05.000Z";
    const pending = checkoutHtml(operation({ status: "pending", expiresAt }), context);
    expect(pending).toContain(`<time id="countdown" datetime="${expiresAt}">until 2030-01-02 03:04 UTC</time>`);
    expect(pending).not.toContain("<form");
    expect(pending).toContain('data-status-url="/pay/00000000-0000-4000-8000-000000000000/status"');
    const awaiting = checkoutHtml(operation({ status: "awaiting_confirmation", expiresAt }), context);
    expect(awaiting).toContain('id="countdown"');
    expect(awaiting).toContain('accept=".pdf,.jpg,.jpeg,.png,application/pdf,image/jpeg,image/png"');
    const review = checkoutHtml(operation({ status: "manual_check", expiresAt }), context);
    expect(review).not.toContain('id="countdown"');
    expect(review).not.toContain("<form");
    expect(checkoutHtml(operation({ status: "completed", expiresAt }), context)).not.toContain("data-status-url");
  });

  it("escapes every value it renders", () => {
    const html = checkoutHtml(operation({ status: "awaiting_confirmation", number: '<script>alert("x")</script>', name: "O'Brien & Sons", banknameDetails: "<b>bank</b>" }), context);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b>bank");
    expect(html).toContain("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;");
    expect(html).toContain("O&#39;Brien &#38; Sons");
  });

  it("speaks the payer's language", () => {
    const ru = checkoutHtml(operation({ status: "awaiting_confirmation" }), { ...context, language: "ru" });
    expect(ru).toContain('<html lang="ru">');
    expect(ru).toContain("Ожидаем чек");
    expect(ru).toContain("Отправить чек");
    expect(notFoundHtml({ ...context, language: "ru" })).toContain("Платёж не найден");
  });

  it("has every text in every language", () => {
    const shape = (value: unknown): unknown => (typeof value === "object" && value ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)])) : typeof value);
    for (const language of LANGUAGES) expect(shape(TEXTS[language])).toEqual(shape(TEXTS.en));
  });
});

describe("upload refusals in the payer's words", () => {
  it.each([
    ["payload_too_large", [], "too_large"],
    ["unsupported_media_type", [], "wrong_type"],
    ["invalid_state", [], "not_accepted_now"],
    ["validation_error", [{ field: "receipt", issue: "must not be empty" }], "empty"],
    ["validation_error", [{ field: "receipt", issue: "a file part is required" }], "no_file"],
    ["validation_error", [{ field: "receipt", issue: "must be a single file" }], "no_file"],
    ["unavailable", [], "try_later"],
    ["internal", [], "try_later"],
  ] as const)("%s %j → %s", (code, details, problem) => {
    expect(uploadProblem(code, details)).toBe(problem);
  });
});
