import { maskCardNumber, maskCardNumbersIn } from "@pgw/contracts";

describe("card numbers shown", () => {
  it.each([
    ["4111111111111111", "411111******1111"],
    ["2200700012345678901", "220070*********8901"],
    ["4222222222222", "422222***2222"],
    ["+79161234567", "+79161234567"],
    ["123456789012", "123456789012"],
  ])("%s as %s", (value, shown) => expect(maskCardNumber(value)).toBe(shown));

  it("are masked wherever they stand alone in a log line, and nothing else is", () => {
    const line = JSON.stringify({
      msg: "payout to 4111111111111111 failed",
      number: "2200700012345678",
      operation_id: "12345678-1234-1234-1234-123456789012",
      hash: "0123456789012345abcdef",
      amount: "12345678901234.50",
      at: 1767225600000,
      phone: "+79161234567",
    });
    expect(maskCardNumbersIn(line)).toBe(
      JSON.stringify({
        msg: "payout to 411111******1111 failed",
        number: "220070******5678",
        operation_id: "12345678-1234-1234-1234-123456789012",
        hash: "0123456789012345abcdef",
        amount: "12345678901234.50",
        at: 1767225600000,
        phone: "+79161234567",
      }),
    );
  });
});
